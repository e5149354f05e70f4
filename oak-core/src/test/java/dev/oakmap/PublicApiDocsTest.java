package dev.oakmap;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.spi.ToolProvider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The exported API's Javadoc stays complete: the JDK's {@code javadoc} tool, run with every
 * doclint check over the packages the module exports, reports no warning and no error (a missing
 * {@code @param}, {@code @return} or main description, a broken link, bad HTML). Internal
 * packages are not checked. Needs the sources beside the build (Maven runs tests from the
 * module's directory) and a full JDK; it fails, rather than skips, without either.
 */
class PublicApiDocsTest {

    /** The packages {@code module-info.java} exports. */
    private static final List<String> EXPORTED = List.of("dev.oakmap", "dev.oakmap.common", "dev.oakmap.somar");

    @Test
    void exportedPackagesHaveCompleteJavadoc() throws IOException {
        Path sources = Path.of("src", "main", "java");
        assertTrue(Files.isRegularFile(sources.resolve("module-info.java")),
                "run from oak-core: no sources at " + sources.toAbsolutePath());
        ToolProvider javadoc = ToolProvider.findFirst("javadoc")
                .orElseThrow(() -> new AssertionError("no javadoc tool in this JDK"));
        Path out = Files.createTempDirectory("oak-javadoc");
        StringWriter report = new StringWriter();
        PrintWriter writer = new PrintWriter(report);
        String[] args = concat(new String[]{"-quiet", "-Xdoclint:all", "-Xmaxwarns", "10000",
                "-d", out.toString(), "--source-path", sources.toString()}, EXPORTED);
        int exit = javadoc.run(writer, writer, args);
        writer.flush();
        List<String> problems = report.toString().lines()
                .filter(l -> l.contains("warning:") || l.contains("error:"))
                .toList();
        assertEquals(List.of(), problems, "doclint findings in the exported API");
        assertEquals(0, exit, "javadoc failed:\n" + report);
    }

    private static String[] concat(String[] head, List<String> tail) {
        String[] all = Arrays.copyOf(head, head.length + tail.size());
        for (int i = 0; i < tail.size(); i++) {
            all[head.length + i] = tail.get(i);
        }
        return all;
    }
}
