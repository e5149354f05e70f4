package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.Refs;

import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The reclamation side of Nova (the Nova thesis, Ch. 3): when a deleted slice may be handed out
 * again, given that other threads may still be reading or writing it.
 *
 * <h2>State</h2>
 * <ul>
 * <li>The <b>era</b>, a counter that versions newly allocated slices ({@link #version()}).
 * <li><b>Announcements</b> ({@link Announcements}): the slice a writer is writing, or
 *     {@link Refs#NULL} (the thesis's TAP entry, a hazard pointer used by writers only). A writer
 *     takes a free participant for each write, by a CAS of its announcement from {@code NULL} to
 *     the slice, trying first the one it used last, and frees it when the write ends; so there
 *     are never more participants than writes that were in progress at the same time, however
 *     many threads come and go.
 * <li>A fixed number of <b>release lists</b> of deleted slices not yet returned to the
 *     allocator, each with its lock. A thread appends to its home list, or to the next one it
 *     can lock without waiting. Home lists are dealt out in turn as threads first use the
 *     reclaimer, so that a few threads (a pool on as many cores) each get a list of their own
 *     rather than share one and pass its lock and lines back and forth on every removal, as two
 *     threads did one time in four when the home was a hash of the thread id.
 * </ul>
 * The thesis gives each thread an announcement and a release list of its own. A program that
 * runs each task on a thread of its own (virtual threads, say) then registers a participant per
 * task, and deletes a slice or two per thread: per-thread lists rarely reach a batch, and their
 * slices stay listed after their thread ends (measured before this change: 100,000 virtual
 * threads, each putting and removing one pair, took 7-13 s and left the map's memory growing
 * with every removal). Participants taken per write and shared lists keep both bounded.
 *
 * <h2>Reclamation</h2>
 * A deleted slice goes to a release list ({@link #retire}). When a list reaches its share of the
 * batch ({@link #perList}: the batch over the number of lists, so that at most about a batch of
 * slices waits in all), the thread that filled it runs a reclamation round, unless another thread holds the
 * list (and will find it full in turn): it locks that list and every other non-empty list it can
 * lock without waiting, increments the era, reads every announcement, and gives the allocator
 * every listed slice of the lists it holds that no thread announces; announced slices stay
 * listed. Rounds never wait for a lock, and a thread that stalls in the middle of a write holds
 * back only the slice it announces. One exception: when the allocator finds its capacity
 * exhausted, it runs a round over every list ({@link #reclaimNow}), waiting for each list's lock
 * (held only for an append or a round, neither of which allocates), so that an insertion into a
 * full map fails only if the slices deleted so far cannot be reused either.
 *
 * <p>Why this is safe: each listed slice was marked deleted, then appended to a list under that
 * list's lock, before the round locked the list; so the era increment comes after the slice's
 * allocation, and its next allocation gets a different version: every old reference fails
 * validation, whether its reader started before or after the reuse. Readers need nothing more,
 * since they validate after reading. A writer stores its announcement with a CAS (a full fence)
 * before it checks the header; a round reads the participants (a volatile read of the array) and
 * their announcements (volatile loads) after the slices were marked deleted. Either the round
 * sees the announcement and keeps the slice, or the writer's check comes after the deletion and
 * fails. A writer that adds a participant after the round read the array announces, and checks,
 * after the deletion too. Withdrawing clears a participant announcing the slice: the writer's
 * own, or, if a nested write took another, any that announces the same slice; either way as
 * many participants announce a slice as writers are between announcing and withdrawing it.
 */
public final class Nova {
    /** Deleted slices, over all release lists, that a reclamation round waits for at most. */
    public static final int DEFAULT_BATCH = Integer.getInteger("oak.nova.batch", 1024);
    /** Release lists per reclaimer: a power of two from twice to four times the processors, at least 4. */
    private static final int LISTS =
            Math.max(4, Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors()) * 4 - 1));

    private final BlockAllocator allocator;
    private final BlockAllocator.Kind kind;
    private final int batch;
    /** A list's share of {@link #batch}: the length at which it triggers a round. */
    private final int perList;
    private final AtomicInteger era = new AtomicInteger(1);
    /** The slices writers are about to write (the thesis's TAP), which a round keeps listed. */
    private final Announcements announcements = new Announcements();
    /** Home lists dealt so far (see {@link #homeList}). */
    private final AtomicInteger homesDealt = new AtomicInteger();
    /** Each thread's home list (see {@link #homeList}). */
    private final ThreadLocal<Integer> home = ThreadLocal.withInitial(homesDealt::getAndIncrement);
    private final ReleaseList[] lists = new ReleaseList[LISTS];
    private final AtomicLong rounds = new AtomicLong();

    /** Deleted slices waiting for a round; guarded by {@link #lock}. */
    static final class ReleaseList {
        final ReentrantLock lock = new ReentrantLock();
        long[] refs = new long[16];
        long[] sizes = new long[16];
        int count;

        void append(long ref, long bytes) {
            if (count == refs.length) {
                refs = Arrays.copyOf(refs, count * 2);
                sizes = Arrays.copyOf(sizes, count * 2);
            }
            refs[count] = ref;
            sizes[count] = bytes;
            count++;
        }
    }

    Nova(BlockAllocator allocator, BlockAllocator.Kind kind) {
        this(allocator, kind, DEFAULT_BATCH);
    }

    /**
     * @param allocator where reclaimed slices go
     * @param kind the kind they are freed as
     * @param batch deleted slices, over all release lists, that wait for a round at most (each
     *     list triggers a round at its share of them)
     */
    public Nova(BlockAllocator allocator, BlockAllocator.Kind kind, int batch) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be positive: " + batch);
        }
        this.allocator = allocator;
        this.kind = kind;
        this.batch = batch;
        this.perList = Math.max(1, batch / LISTS);
        for (int i = 0; i < lists.length; i++) {
            lists[i] = new ReleaseList();
        }
        allocator.reclaimAtCapacity(this::reclaimNow); // a full map gets its deleted slices back before failing
    }

    /**
     * Advances the era, so that slices allocated from now on get a version that no earlier
     * reference carries.
     *
     * @return the version slices allocated from now on get at least (see {@link #version()})
     */
    int advanceEra() {
        era.incrementAndGet();
        return version();
    }

    /**
     * Waits until no writer announces a slice of block {@code blockId}: called after the block's
     * layout era was published (a volatile store before these volatile loads), so that every
     * writer that announced before reading it has withdrawn, and later ones see the era.
     */
    void awaitWritersOutside(int blockId) {
        announcements.awaitOutside(blockId);
    }

    /** @return the version for a slice allocated now: the era, in the 27 bits a reference holds (never 0) */
    public int version() {
        int v = era.get() & Refs.MAX_AUX;
        return v == 0 ? 1 : v;
    }

    /**
     * Announces that the calling thread is about to write {@code ref}: takes a free participant
     * (the one it used last, if free) with a CAS, a full fence, so the announcement is visible
     * before the caller checks the slice's header. Each call must be followed by
     * {@link #withdraw} of the same reference.
     */
    public void announce(long ref) {
        announcements.announce(ref);
    }

    /**
     * Withdraws the calling thread's announcement of {@code ref} (a release store: after its
     * writes), freeing its participant.
     *
     * @throws IllegalStateException if no participant announces {@code ref} (a bug)
     */
    public void withdraw(long ref) {
        announcements.withdraw(ref);
    }

    /** Queues a deleted slice of {@code bytes} bytes for reuse, running a round if its list is full. */
    public void retire(long ref, long bytes) {
        ReleaseList list = lockSomeList();
        boolean full;
        try {
            list.append(ref, bytes);
            full = list.count >= perList;
        } finally {
            list.lock.unlock();
        }
        if (full) {
            reclaim(list);
        }
    }

    /**
     * @return a release list, locked: the calling thread's home list, else the first after it
     *     that is free, else (all busy) the home list, waited for
     */
    private ReleaseList lockSomeList() {
        int home = homeList();
        for (int i = 0; i < lists.length; i++) {
            ReleaseList list = lists[(home + i) & (lists.length - 1)];
            if (list.lock.tryLock()) {
                return list;
            }
        }
        ReleaseList list = lists[home];
        list.lock.lock();
        return list;
    }

    /** @return the index of the calling thread's home release list */
    int homeList() {
        return home.get() & (lists.length - 1);
    }

    /** Runs a reclamation round now, over every list (waiting for each list's lock in turn). */
    public void reclaimNow() {
        boolean[] held = new boolean[lists.length];
        try {
            for (int i = 0; i < lists.length; i++) { // in index order: two such rounds cannot deadlock
                lists[i].lock.lock();
                held[i] = true;
            }
            round(held);
        } finally {
            unlockHeld(held);
        }
    }

    /**
     * A round started by {@code full} reaching its share of the batch, over every non-empty list
     * it can lock without waiting. If {@code full} itself is busy, its holder is appending (and will find it
     * full and run the round) or running a round: this thread goes on. Never waiting here matters
     * with virtual threads: when a list fills, every thread appending to it would otherwise park
     * here, and their carriers would start more.
     */
    private void reclaim(ReleaseList full) {
        if (!full.lock.tryLock()) {
            return;
        }
        boolean[] held = new boolean[lists.length];
        try {
            for (int i = 0; i < lists.length; i++) {
                ReleaseList list = lists[i];
                held[i] = list == full || (list.count > 0 && list.lock.tryLock());
            }
            if (full.count >= perList) { // else a round ran since this thread found it full
                round(held);
            }
        } finally {
            unlockHeld(held);
        }
    }

    /** One round over the lists whose locks the caller holds ({@code held}). */
    private void round(boolean[] held) {
        era.incrementAndGet(); // after every listed slice was allocated and deleted (see the class comment)
        Set<Long> announced = announcements.snapshot(); // volatile reads, after the increment
        for (int i = 0; i < lists.length; i++) {
            if (held[i]) {
                freeUnannounced(lists[i], announced);
            }
        }
        rounds.incrementAndGet();
    }

    private void unlockHeld(boolean[] held) {
        for (int i = 0; i < held.length; i++) {
            if (held[i]) {
                lists[i].lock.unlock();
            }
        }
    }

    private void freeUnannounced(ReleaseList list, Set<Long> announced) {
        int kept = 0;
        for (int i = 0; i < list.count; i++) {
            long ref = list.refs[i];
            if (!announced.isEmpty() && announced.contains(Refs.withAux(ref, 0))) {
                list.refs[kept] = ref;
                list.sizes[kept] = list.sizes[i];
                kept++;
            } else {
                allocator.free(ref, list.sizes[i], kind);
            }
        }
        list.count = kept;
        if (kept == 0 && list.refs.length > 4 * perList) {
            list.refs = new long[16]; // a burst grew the list: give the heap back
            list.sizes = new long[16];
        }
    }

    /** @return slices deleted and not yet returned to the allocator, over all lists (a snapshot) */
    public long pendingSlices() {
        long n = 0;
        for (ReleaseList list : lists) {
            list.lock.lock();
            try {
                n += list.count;
            } finally {
                list.lock.unlock();
            }
        }
        return n;
    }

    /** @return participants added so far: at most the writes that were in progress at once */
    public int participants() {
        return announcements.count();
    }

    /** @return the writers' announcements (for tests) */
    Announcements announcements() {
        return announcements;
    }

    /** @return the number of release lists */
    int releaseLists() {
        return lists.length;
    }

    /** @return reclamation rounds run so far */
    public long rounds() {
        return rounds.get();
    }

    /** @return the current era */
    public int era() {
        return era.get();
    }
}
