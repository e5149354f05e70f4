package dev.oakmap.bench.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The Markdown report: settings, machine, medians with min/max, ratios to the baseline, memory, charts. */
final class Report {

    private Report() {
    }

    /** What the report says about how it was produced. */
    record Context(String command, String machine, String jvm, String commit, String started, String finished,
                   double wallSeconds, String chartsLibrary) {
    }

    static void write(Path file, Results res, Options o, Context ctx, List<Charts.Written> charts) throws IOException {
        StringBuilder b = new StringBuilder();
        b.append("# Oak benchmark report\n\n");
        b.append("Command: `").append(ctx.command()).append("`\n\n");
        b.append("| | |\n|---|---|\n");
        row(b, "machine", ctx.machine());
        row(b, "JVM (harness)", ctx.jvm());
        row(b, "commit", ctx.commit());
        row(b, "started / finished", ctx.started() + " / " + ctx.finished()
                + String.format(Locale.ROOT, " (%.0f s)", ctx.wallSeconds()));
        row(b, "key range", String.format(Locale.ROOT, "%,d keys, %,d pairs after ingestion (50%%), %s keys",
                o.keys, o.ingestedPairs(), o.distribution + (o.distribution.equals("zipf") ? " theta " + o.zipfTheta : "")));
        row(b, "sizes", o.keySize + " B keys, " + o.valueSize + " B values");
        row(b, "runs", String.format(Locale.ROOT, "%.1f s measured after %.1f s warm-up; %d repetition%s per point, %s",
                o.duration, o.warmup, o.reps, o.reps == 1 ? "" : "s",
                o.fork ? "each in a fresh JVM" : "all in the harness's JVM (--fork false: for testing only)"));
        row(b, "scans", Math.min(o.scan, o.ingestedPairs()) + " pairs per scan; one scan is one operation");
        StringBuilder budgets = new StringBuilder();
        for (MapKind m : o.maps) {
            Options.Budget bu = o.budget(m);
            budgets.append(m.name()).append(": heap ").append(Options.size(bu.heap()));
            if (bu.offHeap() > 0) {
                budgets.append(" + off-heap ").append(Options.size(bu.offHeap()));
            }
            budgets.append("; ");
        }
        if (o.fork) {
            row(b, "memory budget", (o.heap > 0 && o.ram <= 0 ? "fixed heap (--heap): " : "same RAM per map, "
                    + Options.size(o.ramBudget()) + ": ") + budgets.toString().replaceAll("; $", ""));
        } else {
            row(b, "memory budget", "not applied (--fork false): every map ran in the harness's JVM, heap "
                    + Options.size(Runtime.getRuntime().maxMemory()));
        }
        if (!o.jvmArgs.isEmpty()) {
            row(b, "extra JVM flags", String.join(" ", o.jvmArgs));
        }
        row(b, "charts", ctx.chartsLibrary());
        b.append('\n');

        b.append("## Maps\n\n| map | version | what it is |\n|---|---|---|\n");
        for (MapKind m : o.maps) {
            b.append("| ").append(m.name()).append(" | ").append(m.version()).append(" | ")
                    .append(m.description()).append(" |\n");
        }
        b.append("\n## Workloads\n\n| workload | one operation |\n|---|---|\n");
        for (Workload w : o.workloads) {
            b.append("| ").append(w.id).append(" | ").append(w.description).append(" |\n");
        }

        MapKind base = MapKind.baselineOf(o.maps);
        b.append("\n## Throughput\n\nOperations per second, median of the repetitions, with [min - max] when "
                + "there are several. Ratios are medians over the baseline's median, measured in the same "
                + "invocation (runs of the maps interleaved). `-`: the map has no such operation; `=` marks a "
                + "figure shared with another workload whose operation is the same for that map.\n\n");
        b.append("| workload | threads |");
        for (MapKind m : o.maps) {
            b.append(' ').append(m.name()).append(" |");
        }
        if (base != null) {
            for (MapKind m : o.maps) {
                if (m != base) {
                    b.append(' ').append(m.name()).append(" / ").append(base.name()).append(" |");
                }
            }
        }
        b.append("\n|---|---:|");
        int cols = o.maps.size() + (base != null ? o.maps.size() - 1 : 0);
        b.append("---:|".repeat(cols)).append('\n');
        for (Workload w : o.workloads) {
            for (int t : o.threads) {
                boolean any = o.maps.stream().anyMatch(m -> res.stat(m, w, t, "ops_per_s") != null);
                if (!any) {
                    continue;
                }
                b.append("| ").append(w.id).append(" | ").append(t).append(" |");
                for (MapKind m : o.maps) {
                    Workload actual = m.runAs().apply(w);
                    Results.Stat s = res.stat(m, w, t, "ops_per_s");
                    b.append(' ').append(s == null ? (actual == null ? "-" : "n/a") : cell(s))
                            .append(actual != null && actual != w ? " =" + actual.id : "").append(" |");
                }
                if (base != null) {
                    Results.Stat bs = res.stat(base, w, t, "ops_per_s");
                    for (MapKind m : o.maps) {
                        if (m == base) {
                            continue;
                        }
                        Results.Stat s = res.stat(m, w, t, "ops_per_s");
                        b.append(' ').append(s != null && bs != null && bs.median() > 0
                                ? String.format(Locale.ROOT, "**%.2fx**", s.median() / bs.median()) : "-").append(" |");
                    }
                }
                b.append('\n');
            }
        }

        b.append("\n## Memory after ingestion\n\nPer pair, median over every run of the map (each measures after its "
                + "ingestion stage): heap growth after full collections (heap in use after ingesting minus heap in "
                + "use before building the map), off-heap bytes in use and reserved, and the overhead beyond the raw "
                + String.format(Locale.ROOT, "key and value bytes (%d B/pair): heap growth + off-heap used - raw.%n%n",
                o.keySize + o.valueSize));
        b.append("| map | pairs | heap B/pair | off-heap used B/pair | off-heap reserved B/pair | overhead B/pair |\n");
        b.append("|---|---:|---:|---:|---:|---:|\n");
        for (MapKind m : o.maps) {
            Results.Stat h = res.statAll(m, "heap_b_per_pair");
            if (h == null) {
                continue;
            }
            Results.Stat p = res.statAll(m, "pairs_ingested");
            b.append("| ").append(m.name()).append(" | ").append(String.format(Locale.ROOT, "%,.0f", p.median()))
                    .append(" | ").append(f1(h)).append(" | ").append(f1(res.statAll(m, "offheap_used_b_per_pair")))
                    .append(" | ").append(f1(res.statAll(m, "offheap_reserved_b_per_pair")))
                    .append(" | **").append(f1(res.statAll(m, "overhead_b_per_pair"))).append("** |\n");
        }

        if (!charts.isEmpty()) {
            b.append("\n## Charts\n\n");
            for (Charts.Written c : charts) {
                b.append("![").append(c.title()).append("](").append(c.file()).append(")\n\n");
            }
        }

        List<Map<String, String>> failed = res.failures();
        if (!failed.isEmpty()) {
            b.append("## Failed runs\n\n| map | workload | threads | rep | error |\n|---|---|---:|---:|---|\n");
            for (Map<String, String> r : failed) {
                b.append("| ").append(r.get("map")).append(" | ").append(r.get("workload")).append(" | ")
                        .append(r.get("threads")).append(" | ").append(r.get("rep")).append(" | ")
                        .append(r.getOrDefault("error", "").replace("|", "/")).append(" |\n");
            }
            b.append('\n');
        }
        b.append("Raw rows (one per run, with GC counts, JVM flags and budgets): `results.csv`; "
                + "child JVM output: `logs/`.\n");
        Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
    }

    private static void row(StringBuilder b, String k, String v) {
        b.append("| ").append(k).append(" | ").append(v.replace("|", "/")).append(" |\n");
    }

    private static String f1(Results.Stat s) {
        return s == null ? "-" : String.format(Locale.ROOT, "%.1f", s.median());
    }

    /** A median with its spread, in engineering units. */
    static String cell(Results.Stat s) {
        if (s.n() == 1) {
            return human(s.median());
        }
        return human(s.median()) + " [" + human(s.min()) + " - " + human(s.max()) + "]";
    }

    static String human(double v) {
        if (v >= 1e6) {
            return String.format(Locale.ROOT, "%.3g M", v / 1e6);
        }
        if (v >= 1e3) {
            return String.format(Locale.ROOT, "%.3g k", v / 1e3);
        }
        return String.format(Locale.ROOT, "%.3g", v);
    }
}
