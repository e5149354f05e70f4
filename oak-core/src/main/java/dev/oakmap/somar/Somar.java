package dev.oakmap.somar;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.MemoryScheme;
import dev.oakmap.OakClosedException;
import dev.oakmap.OakOutOfMemoryException;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.internal.reclaim.SomarSlices;

import java.util.function.Function;

/**
 * Safe off-heap memory allocation and reclamation (SOMAR, from the Nova thesis): the memory
 * manager of {@code OakMap}, offered to other data structures that keep data off-heap and
 * reference it from on-heap structures.
 *
 * <p>A slice is addressed by a <em>safe pointer</em>, a plain {@code long} that may be copied and
 * stored anywhere (in {@code long[]} arrays, fields, other slices) without telling the manager.
 * A slice may be deleted while other threads still hold safe pointers to it, and its memory then
 * reused; every later access through an old pointer fails with
 * {@link DeletedMemoryAccessException}, never returning or changing the bytes of the new owner.
 *
 * <ul>
 * <li>{@link #allocate} returns a pointer to a new, <em>private</em> slice: no other thread can
 *     reach it until the caller publishes the pointer. Fill it with {@link #writePrivate}; if
 *     publishing fails, give it back with {@link #deletePrivate}. Private methods skip all
 *     synchronization; calling them on a published slice is a bug this class cannot detect.
 *     {@link #deletePrivate} frees the slice at once (under Nova without waiting for an era), so
 *     the caller must drop every copy of the pointer first.
 * <li>{@link #read} runs a function over the slice and returns its result. Under
 *     {@link MemoryScheme#NOVA} the read is optimistic: the function may run more than once, and
 *     may see torn bytes on runs whose result is then discarded, so it must be free of side
 *     effects and tolerate garbage (an exception it throws on such a run is discarded too).
 * <li>{@link #write} runs a function over the slice under the slice's write lock: writes to one
 *     slice are atomic with respect to each other and to reads. Reads of that slice retry until
 *     the write ends (keep write functions short); other slices are unaffected.
 * <li>{@link #delete} deletes a published slice; exactly one of several concurrent deletes wins.
 * </ul>
 * Buffers handed to the functions are valid only during the call. Calls must not be nested
 * (a function must not call back into the same manager); a function that reads, writes or
 * deletes its own slice this way fails with {@link IllegalStateException} rather than wait for
 * itself. A pointer this manager did not hand out (another manager's, or a made-up number whose
 * block is not this manager's) is rejected with {@link IllegalArgumentException}. All methods
 * are thread-safe.
 *
 * <pre>{@code
 * try (Somar memory = Somar.create(MemoryScheme.NOVA, 1L << 30)) {
 *     long p = memory.allocate(16);
 *     memory.writePrivate(p, b -> { b.putLong(0, 42); return null; });
 *     shared.publish(p);                                  // now other threads may use it
 *     long v = memory.read(p, b -> b.getLong(0));         // 42, or DeletedMemoryAccessException
 *     memory.write(p, b -> { b.putLong(8, v + 1); return null; });
 *     memory.delete(p);
 * }
 * }</pre>
 * A manager dropped without being closed gives its memory back once the garbage collector finds
 * it unreachable (safe pointers are plain numbers and do not keep it reachable: the pointers of
 * a dropped manager are worthless); {@link #close()} does so at once.
 *
 * See {@code dev.oakmap.bench.somar.LinkedListMap} in the benchmark module for a concurrent
 * sorted linked-list map built on this interface.
 */
public interface Somar extends AutoCloseable {

    /**
     * Creates a manager with its own off-heap blocks.
     *
     * @param scheme how deleted slices are reused: {@link MemoryScheme#NOVA} reclaims without
     *     blocking (reads never write shared memory, and a stalled thread holds back at most the
     *     slice it is writing); note that under every scheme a write locks its one slice, so a
     *     read of that slice waits for the write to finish
     * @param capacityBytes the most off-heap memory it may hold
     * @return a new manager; close it to give the memory back
     * @throws NullPointerException if {@code scheme} is null
     * @throws IllegalArgumentException if {@code capacityBytes} is not positive
     */
    static Somar create(MemoryScheme scheme, long capacityBytes) {
        return new SomarSlices(scheme, capacityBytes);
    }

    /**
     * Allocates a private slice of {@code length} bytes (contents unspecified).
     *
     * @param length the size of the slice, in bytes
     * @return its safe pointer
     * @throws IllegalArgumentException if {@code length} is negative, or if the slice would not fit
     *     in one off-heap block of the largest size (128 MiB, header included)
     * @throws OakOutOfMemoryException if the capacity is exhausted
     * @throws OakClosedException if closed
     */
    long allocate(int length);

    /**
     * Reads the slice with {@code reader}. An exception that {@code reader} throws on a run over
     * consistent bytes propagates.
     *
     * @param <R> the type of the result
     * @param pointer the slice's safe pointer
     * @param reader the function to run over a read-only buffer of the slice's bytes
     * @return what {@code reader} returned on a run over consistent bytes
     * @throws DeletedMemoryAccessException if the slice was deleted
     * @throws NullPointerException if {@code reader} is null
     * @throws IllegalArgumentException if {@code pointer} points into no block of this manager
     *     (another manager's pointer, for instance)
     * @throws IllegalStateException if the function accessed its own slice through this manager
     *     (see the class comment)
     * @throws OakClosedException if closed
     */
    <R> R read(long pointer, Function<? super OakScopedReadBuffer, ? extends R> reader);

    /**
     * Writes the slice with {@code writer}, under its write lock. If {@code writer} throws, the lock
     * is released and the exception propagates; the writes it made before throwing are not undone.
     *
     * @param <R> the type of the result
     * @param pointer the slice's safe pointer
     * @param writer the function to run over a writable buffer of the slice's bytes
     * @return what {@code writer} returned
     * @throws DeletedMemoryAccessException if the slice was deleted
     * @throws NullPointerException if {@code writer} is null
     * @throws IllegalArgumentException if {@code pointer} points into no block of this manager
     *     (another manager's pointer, for instance)
     * @throws IllegalStateException if the function accessed its own slice through this manager
     *     (see the class comment)
     * @throws OakClosedException if closed
     */
    <R> R write(long pointer, Function<? super OakScopedWriteBuffer, ? extends R> writer);

    /**
     * Deletes a published slice. Its memory is reused once no thread can be writing it; readers
     * holding its pointer fail from now on.
     *
     * @param pointer the slice's safe pointer
     * @return true if this call deleted it, false if it was already deleted
     * @throws IllegalArgumentException if {@code pointer} points into no block of this manager
     *     (another manager's pointer, for instance)
     * @throws IllegalStateException if called from a function running over the same slice
     *     (see the class comment)
     * @throws OakClosedException if closed
     */
    boolean delete(long pointer);

    /**
     * Writes a slice that no other thread can reach yet, without synchronization.
     *
     * @param <R> the type of the result
     * @param pointer the safe pointer of a slice from {@link #allocate} not yet published
     * @param writer the function to run over a writable buffer of the slice's bytes
     * @return what {@code writer} returned
     * @throws NullPointerException if {@code writer} is null
     * @throws IllegalArgumentException if {@code pointer} points into no block of this manager
     *     (another manager's pointer, for instance)
     * @throws DeletedMemoryAccessException if the slice was given back or deleted (a private
     *     slice given back twice, for instance)
     * @throws OakClosedException if closed
     */
    <R> R writePrivate(long pointer, Function<? super OakScopedWriteBuffer, ? extends R> writer);

    /**
     * Gives back a slice that no other thread can reach (never published). Giving a slice back
     * twice is detected until its memory is allocated again (under {@link MemoryScheme#NOVA} and
     * {@link MemoryScheme#GROW_ONLY} the new slice may then have the same pointer, since the version
     * in a pointer changes only when deleted slices are reclaimed, or never: drop every copy
     * first).
     *
     * @param pointer the safe pointer of a slice from {@link #allocate} not yet published
     * @throws IllegalArgumentException if {@code pointer} points into no block of this manager
     *     (another manager's pointer, for instance)
     * @throws DeletedMemoryAccessException if the slice was given back or deleted (a private
     *     slice given back twice, for instance)
     * @throws OakClosedException if closed
     */
    void deletePrivate(long pointer);

    /**
     * Returns the length of a slice.
     *
     * @param pointer the slice's safe pointer
     * @return the slice's length in bytes
     * @throws DeletedMemoryAccessException if the slice was deleted
     * @throws IllegalArgumentException if {@code pointer} points into no block of this manager
     *     (another manager's pointer, for instance)
     * @throws OakClosedException if closed
     */
    int length(long pointer);

    /**
     * Returns the off-heap memory in use. May be called after {@link #close()}.
     *
     * @return off-heap bytes in live slices and in slices deleted but not yet reusable
     */
    long memoryUsed();

    /**
     * Returns the off-heap memory reserved. May be called after {@link #close()}.
     *
     * @return off-heap bytes of blocks held
     */
    long memoryReserved();

    /**
     * Frees all memory; later calls, except {@link #memoryUsed()} and {@link #memoryReserved()},
     * throw {@link OakClosedException}. Idempotent.
     */
    @Override
    void close();
}
