/**
 * Oak: an off-heap concurrent ordered map for JDK 25, built on the Foreign Function &amp; Memory
 * API.
 *
 * <p>{@code dev.oakmap} holds the map and its API ({@code OakMap}, {@code OakMapBuilder}, the
 * buffers, serializer and comparator interfaces, the exceptions); {@code dev.oakmap.common} holds
 * ready-made serializers and comparators; {@code dev.oakmap.somar} offers the map's safe off-heap
 * memory management (SOMAR, with Nova) to other data structures. Everything under {@code dev.oakmap.internal} is an
 * implementation detail and is not exported.
 */
module dev.oakmap {
    exports dev.oakmap;
    exports dev.oakmap.common;
    exports dev.oakmap.somar;
}
