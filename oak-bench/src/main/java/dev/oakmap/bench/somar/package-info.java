/**
 * The SOMAR interface ({@link dev.oakmap.somar.Somar}) put to work outside OakMap, and the Nova
 * thesis's experiments on it (Chapter 4, §4.2).
 *
 * <ul>
 * <li>{@link dev.oakmap.bench.somar.LinkedListMap}: the thesis's LL-map, a lock-free sorted linked
 *     list whose keys and values live off-heap, referenced by safe pointers: the worked example of
 *     a data structure built on SOMAR. {@link dev.oakmap.bench.somar.HeapLinkedListMap} is its
 *     on-heap twin, the garbage collector's baseline.
 * <li>{@link dev.oakmap.bench.somar.EbrSomar} and {@link dev.oakmap.bench.somar.HazardErasSomar}:
 *     epoch-based reclamation and Hazard Eras adapted to the SOMAR interface (one protected region
 *     per call), over the same allocator as oak-core's Nova, lock-based and grow-only schemes
 *     ({@link dev.oakmap.bench.somar.SomarKind} lists all five).
 * <li>{@link dev.oakmap.bench.somar.SomarBench}: Figure 4.1 and Table 4.1 scaled to this machine
 *     ({@code bin/somar-bench}).
 * </ul>
 */
package dev.oakmap.bench.somar;
