/**
 * JMH microbenchmarks of OakMap's hot paths, each against {@link java.util.concurrent.ConcurrentSkipListMap}
 * where it has an equivalent, for regression tracking (bin/jmh runs them):
 * <ul>
 *   <li>{@link dev.oakmap.jmh.LookupBench}: zero-copy get, copying get (legacy API), skiplist get;</li>
 *   <li>{@link dev.oakmap.jmh.PutBench}: put through the zero-copy and the legacy API, skiplist put;</li>
 *   <li>{@link dev.oakmap.jmh.ComputeBench}: {@code zc().computeIfPresent} updating 8 bytes in place,
 *       legacy and skiplist {@code compute} with a copied array;</li>
 *   <li>{@link dev.oakmap.jmh.ScanBench}: one step of an ascending or descending scan, per pair;</li>
 *   <li>{@link dev.oakmap.jmh.KeyCompareBench}: serialized key comparison on memory segments;</li>
 *   <li>{@link dev.oakmap.jmh.NavigationBench}: first/last keys, ceiling, and queue and stack use;</li>
 *   <li>{@link dev.oakmap.jmh.ThreadPerTaskBench}: a removal and a put per task, each task on a
 *       virtual thread of its own;</li>
 *   <li>{@link dev.oakmap.jmh.SegmentAccessBench}: not the map, a probe of a scan step's off-heap
 *       reads through per-block segments and through one segment;</li>
 *   <li>{@link dev.oakmap.jmh.CopyBench}: not the map, the copies between off-heap slices and
 *       arrays by size, the map's ({@code Bytes}) against the JDK's segment copy;</li>
 *   <li>{@link dev.oakmap.jmh.MemoryFloorBench}: not the map, the machine's memory floors (a miss's
 *       latency, independent and sequential lines, a random 1 KB copy) that bound any scan.</li>
 * </ul>
 * The map benchmarks share {@link dev.oakmap.jmh.Data}: {@code pairs} pairs of 100-byte random keys and
 * 1000-byte values (the Oak papers' sizes), ingested before measuring (in random order, or in key
 * order with {@code -p ingestOrder=sorted}), looked up in random order.
 */
package dev.oakmap.jmh;
