package dev.oakmap.examples.druid;

/**
 * The value object handed to the Oak map on insertion: the input row and, for a plain index, the
 * user id's dictionary code. The map only serializes it (see {@link PlainLayout} and
 * {@link RollupLayout}); values are never deserialized back into objects.
 */
record IncomingRow(InputRow row, int userCode) {
}
