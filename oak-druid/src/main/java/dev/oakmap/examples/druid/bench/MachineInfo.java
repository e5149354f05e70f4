package dev.oakmap.examples.druid.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/** What the report says about the machine, the JVM and the source tree. */
final class MachineInfo {

    private MachineInfo() {
    }

    static String describe() {
        return String.format(Locale.ROOT, "%s, %d cpus, %s RAM, %s %s", cpuModel(),
                Runtime.getRuntime().availableProcessors(), BenchOptions.size(memTotal()),
                System.getProperty("os.name"), System.getProperty("os.version"));
    }

    /** @return the 1, 5 and 15 minute load averages of /proc/loadavg, or "unknown" */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    static String jvm() {
        return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
    }

    private static String cpuModel() {
        return procLine("/proc/cpuinfo", "model name").map(l -> l.substring(l.indexOf(':') + 1).trim())
                .orElse(System.getProperty("os.arch"));
    }

    private static long memTotal() {
        return procLine("/proc/meminfo", "MemTotal:").map(l -> Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024)
                .orElse(0L);
    }

    private static java.util.Optional<String> procLine(String file, String start) {
        try {
            return Files.readAllLines(Path.of(file)).stream().filter(l -> l.startsWith(start)).findFirst();
        } catch (IOException | RuntimeException e) {
            return java.util.Optional.empty();
        }
    }

    /** @return {@code git rev-parse HEAD} (with "-dirty" for local changes), or "unknown" */
    static String gitCommit() {
        String head = run(List.of("git", "rev-parse", "HEAD"));
        if (head == null || head.isBlank()) {
            return "unknown";
        }
        String status = run(List.of("git", "status", "--porcelain", "--untracked-files=no"));
        return head.trim() + (status != null && !status.isBlank() ? "-dirty" : "");
    }

    private static String run(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return p.exitValue() == 0 ? out : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
