package dev.oakmap.bench.somar;

import dev.oakmap.MemoryScheme;
import dev.oakmap.somar.Somar;

import java.util.Locale;

/**
 * The {@link Somar} implementations compared by the thesis's experiments: the three schemes of
 * oak-core ({@link Somar#create}) and the two SMR adaptations of this package. All five allocate
 * from the same {@code BlockAllocator}, so they differ only in how deleted slices are reclaimed
 * and how accesses are protected.
 */
public enum SomarKind {
    /** Oak's Nova: optimistic reads, one announced slice per writer, era-versioned headers. */
    NOVA("nova", true) {
        @Override public Somar create(long capacityBytes) { return Somar.create(MemoryScheme.NOVA, capacityBytes); }
    },
    /** Epoch-based reclamation, one protected region per call ({@link EbrSomar}). */
    EBR("ebr", true) {
        @Override public Somar create(long capacityBytes) { return new EbrSomar(capacityBytes); }
    },
    /** Hazard Eras, one protected region per call ({@link HazardErasSomar}). */
    HE("he", true) {
        @Override public Somar create(long capacityBytes) { return new HazardErasSomar(capacityBytes); }
    },
    /** Oak's lock-based scheme: a read-write lock word in every header, immediate reuse. */
    LOCK_BASED("lock", true) {
        @Override public Somar create(long capacityBytes) { return Somar.create(MemoryScheme.LOCK_BASED, capacityBytes); }
    },
    /** Nothing deleted is ever reused (Oak's grow-only scheme). */
    GROW_ONLY("grow-only", false) {
        @Override public Somar create(long capacityBytes) { return Somar.create(MemoryScheme.GROW_ONLY, capacityBytes); }
    };

    /** The command-line and report name. */
    public final String id;
    /** True if deleted slices are reused while the manager lives. */
    public final boolean reclaims;

    SomarKind(String id, boolean reclaims) {
        this.id = id;
        this.reclaims = reclaims;
    }

    /** @return a new, empty manager of this kind holding at most {@code capacityBytes} off-heap */
    public abstract Somar create(long capacityBytes);

    /** @return the kind called {@code id} (case-insensitive) */
    public static SomarKind byId(String id) {
        String s = id.trim().toLowerCase(Locale.ROOT);
        for (SomarKind k : values()) {
            if (k.id.equals(s) || k.name().equalsIgnoreCase(s)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown SOMAR scheme '" + id + "'; known: nova, ebr, he, lock, grow-only");
    }
}
