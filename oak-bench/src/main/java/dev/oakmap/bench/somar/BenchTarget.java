package dev.oakmap.bench.somar;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.somar.Somar;

import java.util.Arrays;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * One data structure of the thesis's experiments (§4.2.1) under one memory scheme, as the
 * benchmark drives it: put, remove and get of byte-string keys and values. A get copies the whole
 * value into the caller's array (the same work on-heap and off-heap).
 */
interface BenchTarget extends AutoCloseable {

    /** Maps {@code key} to {@code value} (both are the caller's scratch arrays: copy what is kept). */
    void put(byte[] key, byte[] value);

    /** Removes {@code key} if present. */
    void remove(byte[] key);

    /** Copies {@code key}'s value into {@code dst}. @return true if the key was present */
    boolean get(byte[] key, byte[] dst);

    /** @return the number of mappings (O(n) for the lists) */
    long size();

    /** @return off-heap bytes in use (live slices plus slices deleted but not reusable yet), 0 on-heap */
    long offHeapUsed();

    /** @return off-heap bytes reserved from the OS, 0 on-heap */
    long offHeapReserved();

    @Override
    void close();

    /**
     * @param structure one of {@link SomarBench#ALL_STRUCTURES}
     * @param scheme    a {@link SomarKind} id, or "heap" for the on-heap baseline
     * @param capacity  off-heap capacity in bytes (off-heap schemes)
     */
    static BenchTarget create(String structure, String scheme, long capacity) {
        boolean heap = scheme.equals("heap");
        return switch (structure) {
            case "ll" -> heap ? new HeapList() : new OffHeapList(SomarKind.byId(scheme).create(capacity));
            case "cslm" -> heap ? new HeapCslm() : new OffHeapCslm(SomarKind.byId(scheme).create(capacity));
            default -> throw new IllegalArgumentException("unknown structure '" + structure + "' ("
                    + String.join(", ", SomarBench.ALL_STRUCTURES) + ")");
        };
    }

    /** Copies as much of the slice as fits into {@code dst}. */
    private static byte[] copyInto(dev.oakmap.OakScopedReadBuffer b, byte[] dst) {
        b.getBytes(0, dst, 0, Math.min(b.capacity(), dst.length));
        return dst;
    }

    /** LL-map: {@link LinkedListMap} with keys and values off-heap, safe pointers as longs in the nodes. */
    final class OffHeapList implements BenchTarget {
        private final Somar memory;
        private final LinkedListMap map;

        OffHeapList(Somar memory) {
            this.memory = memory;
            this.map = new LinkedListMap(memory);
        }

        @Override public void put(byte[] key, byte[] value) { map.put(key, value); }
        @Override public void remove(byte[] key) { map.remove(key); }
        @Override public boolean get(byte[] key, byte[] dst) { return map.get(key, b -> copyInto(b, dst)) != null; }
        @Override public long size() { return map.size(); }
        @Override public long offHeapUsed() { return memory.memoryUsed(); }
        @Override public long offHeapReserved() { return memory.memoryReserved(); }
        @Override public void close() { memory.close(); }
    }

    /** LL-map's GC baseline: {@link HeapLinkedListMap}, byte[] keys and values on the heap. */
    final class HeapList implements BenchTarget {
        private final HeapLinkedListMap map = new HeapLinkedListMap();

        @Override public void put(byte[] key, byte[] value) { map.put(key, value); }
        @Override public void remove(byte[] key) { map.remove(key); }

        @Override
        public boolean get(byte[] key, byte[] dst) {
            byte[] v = map.get(key);
            if (v == null) {
                return false;
            }
            System.arraycopy(v, 0, dst, 0, Math.min(v.length, dst.length));
            return true;
        }

        @Override public long size() { return map.size(); }
        @Override public long offHeapUsed() { return 0; }
        @Override public long offHeapReserved() { return 0; }
        @Override public void close() { }
    }

    /**
     * The thesis's CSLM experiment (§4.2.4): {@code ConcurrentSkipListMap<byte[], Long>} with keys on
     * the heap and each value an off-heap slice referenced by a boxed safe pointer (a CSLM holds
     * objects only). Every put allocates and privately writes a new slice and deletes the old one.
     */
    final class OffHeapCslm implements BenchTarget {
        private final Somar memory;
        private final ConcurrentSkipListMap<byte[], Long> map = new ConcurrentSkipListMap<>(Arrays::compareUnsigned);

        OffHeapCslm(Somar memory) {
            this.memory = memory;
        }

        @Override
        public void put(byte[] key, byte[] value) {
            long p = memory.allocate(value.length);
            memory.writePrivate(p, b -> b.putBytes(0, value, 0, value.length));
            Long old = map.put(key.clone(), p);
            if (old != null) {
                memory.delete(old);
            }
        }

        @Override
        public void remove(byte[] key) {
            Long old = map.remove(key);
            if (old != null) {
                memory.delete(old);
            }
        }

        @Override
        public boolean get(byte[] key, byte[] dst) {
            while (true) {
                Long p = map.get(key);
                if (p == null) {
                    return false;
                }
                try {
                    memory.read(p, b -> copyInto(b, dst));
                    return true;
                } catch (DeletedMemoryAccessException replacedOrRemoved) {
                    // look the key up again
                }
            }
        }

        @Override public long size() { return map.size(); }
        @Override public long offHeapUsed() { return memory.memoryUsed(); }
        @Override public long offHeapReserved() { return memory.memoryReserved(); }
        @Override public void close() { map.clear(); memory.close(); }
    }

    /** The CSLM experiment's GC baseline: {@code ConcurrentSkipListMap<byte[], byte[]>}, copies stored. */
    final class HeapCslm implements BenchTarget {
        private final ConcurrentSkipListMap<byte[], byte[]> map = new ConcurrentSkipListMap<>(Arrays::compareUnsigned);

        @Override public void put(byte[] key, byte[] value) { map.put(key.clone(), value.clone()); }
        @Override public void remove(byte[] key) { map.remove(key); }

        @Override
        public boolean get(byte[] key, byte[] dst) {
            byte[] v = map.get(key);
            if (v == null) {
                return false;
            }
            System.arraycopy(v, 0, dst, 0, Math.min(v.length, dst.length));
            return true;
        }

        @Override public long size() { return map.size(); }
        @Override public long offHeapUsed() { return 0; }
        @Override public long offHeapReserved() { return 0; }
        @Override public void close() { map.clear(); }
    }
}
