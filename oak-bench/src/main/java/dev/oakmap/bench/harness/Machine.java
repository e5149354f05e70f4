package dev.oakmap.bench.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What the reports say about the machine, the JVM and the source tree. */
final class Machine {

    private Machine() {
    }

    static int nproc() {
        return Runtime.getRuntime().availableProcessors();
    }

    /** @return the first "model name" of /proc/cpuinfo, or os.arch */
    static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: fall through
        }
        return System.getProperty("os.arch");
    }

    /** @return MemTotal of /proc/meminfo in bytes, or 0 */
    static long memTotalBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return 0;
    }

    /**
     * @return the anonymous memory this process holds in transparent huge pages
     *     ({@code AnonHugePages} of /proc/self/smaps_rollup), in bytes, or -1 where that is not
     *     available. Oak's blocks get huge pages or not depending on the pace of ingestion, and
     *     scans over gigabytes run about a quarter faster in them, so runs are compared with it in
     *     view; the JVM's heap takes none unless asked to ({@code -XX:+UseTransparentHugePages}).
     */
    static long anonHugePageBytes() {
        try {
            return anonHugePageBytes(Files.readAllLines(Path.of("/proc/self/smaps_rollup")));
        } catch (IOException | RuntimeException e) {
            return -1; // not Linux, or a kernel without smaps_rollup
        }
    }

    /** @return the {@code AnonHugePages} figure of smaps-style {@code lines} in bytes, or -1 if absent */
    static long anonHugePageBytes(List<String> lines) {
        for (String line : lines) {
            if (line.startsWith("AnonHugePages:")) {
                String kb = line.substring("AnonHugePages:".length()).replace("kB", "").trim();
                return Long.parseLong(kb) * 1024;
            }
        }
        return -1;
    }

    static String jvm() {
        return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
    }

    static String os() {
        return System.getProperty("os.name") + " " + System.getProperty("os.version");
    }

    /** @return {@code git rev-parse HEAD}, with "-dirty" if the tree has changes, or "unknown" */
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
            Process p = new ProcessBuilder(cmd).redirectErrorStream(false)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
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

    /** @return the version of the library that holds {@code c}: its manifest, else its jar's file name */
    static String libraryVersion(Class<?> c) {
        String v = c.getPackage().getImplementationVersion();
        if (v != null) {
            return v;
        }
        try {
            String path = c.getProtectionDomain().getCodeSource().getLocation().getPath();
            String file = path.substring(path.lastIndexOf('/') + 1);
            return file.endsWith(".jar") ? file.substring(0, file.length() - 4) : file;
        } catch (RuntimeException e) {
            return "unknown";
        }
    }
}
