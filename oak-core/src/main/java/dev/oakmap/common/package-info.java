/**
 * Ready-made {@link dev.oakmap.OakSerializer serializers} and {@link dev.oakmap.OakComparator
 * comparators} for common key and value types, and {@link dev.oakmap.common.ByteStringComparator},
 * a fast comparator for any key type whose serialized form orders byte-wise.
 *
 * <p>Every type in this package is immutable and thread-safe; the constants in
 * {@link dev.oakmap.common.OakCommonTypes} may be shared by any number of maps.
 */
package dev.oakmap.common;
