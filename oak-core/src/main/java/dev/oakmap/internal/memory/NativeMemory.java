package dev.oakmap.internal.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Maps blocks straight from the kernel with {@code mmap}, advised to use transparent huge pages
 * ({@code madvise(MADV_HUGEPAGE)}) or not to, through the FFM {@link Linker}.
 *
 * <p>Why huge pages: scans and lookups over gigabytes of off-heap data miss the TLB on nearly
 * every value with 4 KiB pages; 2 MiB pages cut those misses by 512x. Why small pages too: a huge
 * page can cost far more to get than 512 small ones. On this project's benchmark host (a VM whose
 * hypervisor backs guest memory lazily), faulting in 64 MiB took 5.5 ms as huge pages the guest
 * had freed recently, but 140 ms as huge pages it had not used yet, against 20-25 ms as small
 * pages either way (a probe with {@code mmap} and {@code MADV_POPULATE_WRITE}). The allocator
 * chooses per block ({@link BlockAllocator}). Mapping with {@code mmap} also avoids
 * {@link Arena#allocate}'s zero-filling of the whole block up front (the kernel hands out zeroed
 * pages on first touch), and {@code munmap} gives the memory back to the OS when the block is
 * freed.
 *
 * <p><b>The block region.</b> A scan touches the slices of the pairs ahead of it in batches, so
 * that their cache misses overlap (see {@code Cursor}). How many misses overlap is bounded by how
 * many instructions the core can hold while the first one is outstanding (it cannot retire a
 * load before its data arrives), so each touch must cost as few instructions as possible. A touch
 * through a block's own segment pays for finding that segment and for its checks (scope, bounds,
 * address: a few dependent loads), and measured twice as slow per line as a load through one
 * segment known to the compiler ({@code MemoryFloorBench}, random lines over 1 GiB: 22.8 ns a line
 * through 8 MiB blocks with an arena each, {@code blockSegmentLine}, against 10.5,
 * {@code independentLine}).
 * So, where it can, this class reserves one large range of address space at startup, the
 * <em>region</em> ({@code MAP_NORESERVE}: no memory is committed until written), with a slot of
 * {@link Refs#MAX_BLOCK_SIZE} bytes per block id, and the shared pool maps each block into its
 * id's slot ({@link #mapSlot}). The region is readable for the life of the process and is never
 * unmapped: a freed block's pages are given back with {@code madvise(MADV_DONTNEED)} (they read
 * as zeros afterwards) rather than by unmapping. So a touch through the region
 * ({@link #touchRegion}) can never fault, whatever reference it is given and whatever happens to
 * the block meanwhile: at worst it reads stale bytes or zeros, which a touch ignores. Every other
 * access still goes through the block's own segment, whose arena is closed when the block is
 * freed, so a read of a freed block fails with {@link IllegalStateException} as before.
 *
 * <p>Used only where it is allowed without warnings: on Linux, when native access is enabled
 * for this module ({@code --enable-native-access=dev.oakmap}, or {@code ALL-UNNAMED} on the
 * class path), and unless {@code -Doak.hugePages=false} ({@code always} maps every block as huge
 * pages: see {@code BlockAllocator}, "Page sizes"). Otherwise, and if any step fails,
 * {@link #map} returns null and the caller falls back to {@link Arena#allocate}. The region
 * needs the same, and can be turned off alone with {@code -Doak.blockRegion=false}; where the
 * kernel refuses the reservation (strict overcommit, an address-space limit), blocks are mapped
 * one by one and touches go through their segments.
 */
final class NativeMemory {
    private NativeMemory() {}

    private static final int PROT_READ_WRITE = 0x3;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MAP_NORESERVE = 0x4000;
    private static final int MADV_DONTNEED = 4;
    private static final int MADV_HUGEPAGE = 14;
    private static final int MADV_NOHUGEPAGE = 15;
    private static final int MADV_POPULATE_WRITE = 23;

    private static final long HUGE_PAGE = 2L << 20;
    /** One slot per block id, 0 to {@link Refs#MAX_BLOCK_ID} + 1, and room to align slot 0. */
    private static final long REGION_BYTES = (Refs.MAX_BLOCK_ID + 2L) * Refs.MAX_BLOCK_SIZE + HUGE_PAGE;
    /**
     * The block region, readable for the life of the process (global scope, never unmapped), or
     * null where it could not be reserved. A static final, so that the compiler folds its bounds
     * and base into every touch.
     */
    private static final MemorySegment REGION;
    /** Offset in {@link #REGION} of slot 0: slots start on a huge-page boundary. */
    private static final long SLOT_ZERO;

    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final MethodHandle MADVISE;

    static {
        MethodHandle mmap = null, munmap = null, madvise = null;
        boolean wanted = !"false".equalsIgnoreCase(System.getProperty("oak.hugePages"))
                && System.getProperty("os.name", "").toLowerCase().contains("linux")
                && NativeMemory.class.getModule().isNativeAccessEnabled();
        if (wanted) {
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                mmap = linker.downcallHandle(libc.find("mmap").orElseThrow(), FunctionDescriptor.of(
                        ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                munmap = linker.downcallHandle(libc.find("munmap").orElseThrow(), FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
                madvise = linker.downcallHandle(libc.find("madvise").orElseThrow(), FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
            } catch (RuntimeException | Error e) {
                mmap = munmap = madvise = null;
            }
        }
        MMAP = mmap;
        MUNMAP = munmap;
        MADVISE = madvise;
        MemorySegment region = !"false".equalsIgnoreCase(System.getProperty("oak.blockRegion"))
                ? reserve(REGION_BYTES) : null;
        REGION = region;
        SLOT_ZERO = region == null ? 0 : (HUGE_PAGE - (region.address() & (HUGE_PAGE - 1))) & (HUGE_PAGE - 1);
    }

    /** @return the reserved range, or null if the kernel refused it or mmap is unavailable */
    private static MemorySegment reserve(long bytes) {
        if (MMAP == null) {
            return null;
        }
        try {
            MemorySegment addr = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, bytes, PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS | MAP_NORESERVE, -1, 0L);
            if (addr.address() == -1L || addr.address() == 0L) {
                return null;
            }
            return addr.reinterpret(bytes); // global scope: never unmapped
        } catch (Throwable t) {
            return null;
        }
    }

    /** @return true if blocks are mapped with {@code mmap} and huge-page advice */
    static boolean available() {
        return MMAP != null;
    }

    /**
     * @return true if every block should be mapped as huge pages, however long they take to get
     *     ({@code -Doak.hugePages=always}, where blocks are mapped with advice at all)
     */
    static boolean hugePagesAlways() {
        return MMAP != null && "always".equalsIgnoreCase(System.getProperty("oak.hugePages"));
    }

    /** @return true if blocks can be mapped into the region ({@link #mapSlot}) */
    static boolean regionAvailable() {
        return REGION != null;
    }

    /**
     * Maps block {@code id} into its slot of the region, advised as {@link #map} does. Closing
     * {@code arena} ends the segment but leaves the pages committed: the block's owner gives them
     * back ({@link #discardSlot}; they then read as zeros through the region, and the slot is
     * ready for the id's next block) or keeps them for a warm reuse ({@link #slot}).
     *
     * @param size at most {@link Refs#MAX_BLOCK_SIZE}
     * @return the block's segment, whose lifetime is {@code arena}'s
     */
    static MemorySegment mapSlot(int id, long size, Arena arena, boolean populate, boolean huge) {
        MemorySegment slot = REGION.asSlice(slotPosition(id), size);
        try {
            int ignored = (int) MADVISE.invokeExact(slot, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE); // advice only
            if (populate) {
                populate(slot, size);
            }
        } catch (Throwable t) {
            // advice and pre-faulting are optional: the pages fault in on first use instead
        }
        return slot.reinterpret(arena, null);
    }

    /**
     * @return the first {@code size} bytes of block {@code id}'s slot as a segment whose lifetime
     *     is {@code arena}'s, over whatever pages the slot holds (no advice, no faulting)
     */
    static MemorySegment slot(int id, long size, Arena arena) {
        return REGION.asSlice(slotPosition(id), size).reinterpret(arena, null);
    }

    /** Writes zeros over the first {@code size} bytes of block {@code id}'s slot, which nobody uses. */
    static void zeroSlot(int id, long size) {
        REGION.asSlice(slotPosition(id), size).fill((byte) 0);
    }

    /**
     * Gives back to the OS the pages of {@code length} bytes from {@code offset} of block
     * {@code id}'s slot (page-aligned by the caller); they read as zeros afterwards.
     *
     * @return false if the kernel refused
     */
    static boolean discardSlot(int id, long offset, long length) {
        return discard(REGION.asSlice(slotPosition(id) + offset, length), length);
    }

    /** @return the position in the region of the start of block {@code id}'s slot */
    static long slotPosition(int id) {
        return SLOT_ZERO + id * Refs.MAX_BLOCK_SIZE;
    }

    /**
     * Reads the byte at {@code position} of the region, whether or not a block is mapped there:
     * only a hint to the caches. The position of any block id up to {@link Refs#MAX_BLOCK_ID} and
     * offset below {@link Refs#MAX_BLOCK_SIZE}, plus less than {@link Refs#MAX_BLOCK_SIZE}, stays
     * within the region (it has a spare slot at the end), so this never fails for them.
     */
    static byte touchRegion(long position) {
        return REGION.get(ValueLayout.JAVA_BYTE, position);
    }

    /**
     * Maps {@code size} bytes of zeroed memory whose lifetime is {@code arena}'s: closing the
     * arena unmaps it.
     *
     * @param populate fault every page in now (see {@link #populate}): the kernel zeroes the block
     *     in one pass instead of one page fault at a time on first writes
     * @param huge advise huge pages; otherwise advise against them, so that the pages are small
     *     even where the system makes every mapping huge
     * @return the segment, or null if native mapping is unavailable or failed
     */
    static MemorySegment map(long size, Arena arena, boolean populate, boolean huge) {
        if (MMAP == null) {
            return null;
        }
        try {
            // The advice must come before the pages are faulted in: MAP_POPULATE in mmap itself
            // faults 4 KiB pages, and the huge-page advice given after it changes nothing (measured:
            // 6 MiB of 256 MiB became huge pages that way, all of it with MADV_POPULATE_WRITE).
            MemorySegment addr = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, size, PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS, -1, 0L);
            if (addr.address() == -1L || addr.address() == 0L) {
                return null;
            }
            int ignored = (int) MADVISE.invokeExact(addr, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE); // advice only
            if (populate) {
                populate(addr, size);
            }
            return addr.reinterpret(size, arena, base -> unmap(base, size));
        } catch (Throwable t) {
            return null;
        }
    }

    /**
     * Faults in every page of a fresh mapping, after the page-size advice, with
     * {@code MADV_POPULATE_WRITE} (Linux 5.14 and later). On an older kernel the advice is refused
     * and the pages fault in on first use instead, which is slower to ingest into but equivalent.
     */
    private static void populate(MemorySegment addr, long size) throws Throwable {
        int ignored = (int) MADVISE.invokeExact(addr, size, MADV_POPULATE_WRITE);
    }

    /**
     * Gives the pages of {@code mapped}, a range {@link #map} or {@link #mapSlot} returned, back
     * to the OS, leaving it mapped (it reads as zeros afterwards).
     *
     * @return false if the kernel refused
     */
    static boolean discardPages(MemorySegment mapped) {
        return discard(mapped, mapped.byteSize());
    }

    /**
     * Gives the pages of {@code size} bytes from {@code base} back to the OS, leaving the range
     * mapped: {@link #discardSlot} and {@link #discardPages}.
     *
     * @return false if the kernel refused (the pages stay committed until the range is next
     *     used; the JVM stays sound)
     */
    private static boolean discard(MemorySegment base, long size) {
        try {
            return (int) MADVISE.invokeExact(base, size, MADV_DONTNEED) == 0;
        } catch (Throwable t) {
            return false;
        }
    }

    /** The arena's cleanup action: gives the pages back to the OS. */
    private static void unmap(MemorySegment base, long size) {
        try {
            int ignored = (int) MUNMAP.invokeExact(base, size);
        } catch (Throwable t) {
            // nothing sensible to do while closing: the mapping leaks, the JVM stays sound
        }
    }
}
