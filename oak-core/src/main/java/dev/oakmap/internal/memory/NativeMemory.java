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
 * <p>Used only where it is allowed without warnings: on Linux, when native access is enabled
 * for this module ({@code --enable-native-access=dev.oakmap}, or {@code ALL-UNNAMED} on the
 * class path), and unless {@code -Doak.hugePages=false}. Otherwise, and if any step fails,
 * {@link #map} returns null and the caller falls back to {@link Arena#allocate}.
 */
final class NativeMemory {
    private NativeMemory() {}

    private static final int PROT_READ_WRITE = 0x3;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_HUGEPAGE = 14;
    private static final int MADV_NOHUGEPAGE = 15;
    private static final int MADV_POPULATE_WRITE = 23;

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
    }

    /** @return true if blocks are mapped with {@code mmap} and huge-page advice */
    static boolean available() {
        return MMAP != null;
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

    /** The arena's cleanup action: gives the pages back to the OS. */
    private static void unmap(MemorySegment base, long size) {
        try {
            int ignored = (int) MUNMAP.invokeExact(base, size);
        } catch (Throwable t) {
            // nothing sensible to do while closing: the mapping leaks, the JVM stays sound
        }
    }
}
