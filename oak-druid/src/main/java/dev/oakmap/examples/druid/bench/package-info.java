/**
 * The ingestion benchmark of the case study ({@code bin/druid-bench}): the paper's Figure 5
 * (throughput against rows at a fixed RAM budget, against the budget at a fixed number of rows,
 * and memory overhead beyond the raw data) for the Oak and the legacy index, each point in a fresh
 * JVM, with CSV, Markdown and PNG output.
 */
package dev.oakmap.examples.druid.bench;
