package io.gpupool.cli;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shell examples of README.md and docs/*.md run as written from a clone. An example that must run is the fenced
 * block right after the line {@code <!-- example: runs (DocExamplesTest) -->} (an HTML comment: readers do not see it). In a block with
 * {@code $ } prompts the prompted lines are the commands (a line ending in {@code \} continues on the next) and the other
 * lines are output; a block without prompts is a script. Each example runs with bash ({@code set -e}) in a fresh
 * directory that links the repository's top-level folders ({@code examples/}, ...), where {@code ./gpupool} and
 * {@code gpupool} run this build's command line (the test's class path, or the jar named by
 * {@code -Dgpupool.examples.jar=cli/target/gpupool.jar}); a failure names the file and line of the example.
 *
 * <p>Not marked, so not run, and why: the README's "Two commands" ({@code server --demo} runs until stopped;
 * {@code ./mvnw -B verify} is this suite) and the tour's client commands ({@code top}, {@code submit}, {@code status},
 * {@code logs}, {@code queue}: they need the demo server and its printed token; ClientCommandsTest covers them against a
 * real server); examples that read {@code $TRACES} (the public traces are not in the repository: docs/traces.md); the
 * download steps of docs/traces.md (network); docs/install.md (its own test); syntax templates with placeholders
 * ({@code FILE}, {@code SPEC}); docker and kubectl commands (docs/kubernetes.md).
 */
class DocExamplesTest {
    /** The mark, as the docs write it (what follows "runs" is a note for editors). */
    static final String MARK = "<!-- example: runs (DocExamplesTest) -->";
    private static final long TIMEOUT_S = 300;
    private static final Path ROOT = Path.of(System.getProperty("gpupool.repo.root", "..")).toAbsolutePath().normalize();

    /** One marked block: where it starts (the fence's line, 1-based) and the bash it runs. */
    record Example(String file, int line, String script) {
        String where() {
            return file + ":" + line;
        }
    }

    @TempDir Path tmp;

    @TestFactory
    Stream<DynamicTest> every_marked_example_runs_as_written() throws IOException {
        List<Example> all = examples();
        return all.stream().map(e -> DynamicTest.dynamicTest(e.where(), () -> run(e)));
    }

    @Test
    void the_readme_marks_its_offline_examples() throws IOException {
        // a guard against a mark lost in an edit: the README's simulate, optimize and advise examples run
        List<Example> readme = examples().stream().filter(e -> e.file().equals("README.md")).toList();
        assertThat(readme).extracting(Example::script).anyMatch(s -> s.contains("gpupool simulate"))
                .anyMatch(s -> s.contains("gpupool optimize")).anyMatch(s -> s.contains("gpupool advise"));
    }

    @Test
    void a_mark_not_followed_by_a_fenced_block_is_an_error_naming_its_line() {
        List<String> doc = List.of("text", MARK, "", "not a fence", "```", "x", "```");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> parse("doc.md", doc)))
                .isInstanceOf(AssertionError.class).hasMessageContaining("doc.md:2");
    }

    @Test
    void prompted_lines_are_the_commands_and_continuations_join_them() {
        List<String> doc = List.of(MARK, "```", "$ head -n 3 a.csv \\", "    > b.csv", "output line", "$ ./gpupool catalog", "more output", "```");
        assertThat(parse("doc.md", doc)).containsExactly(new Example("doc.md", 2, "head -n 3 a.csv \\\n    > b.csv\n./gpupool catalog\n"));
    }

    static List<Example> examples() throws IOException {
        List<Path> files = new ArrayList<>();
        files.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        List<Example> all = new ArrayList<>();
        for (Path f : files) all.addAll(parse(ROOT.relativize(f).toString(), Files.readAllLines(f, StandardCharsets.UTF_8)));
        return all;
    }

    static List<Example> parse(String file, List<String> lines) {
        List<Example> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i).trim();
            if (!(l.startsWith("<!-- example: runs") && l.endsWith("-->"))) continue;
            int fence = i + 1;
            while (fence < lines.size() && lines.get(fence).isBlank()) fence++;
            if (fence >= lines.size() || !lines.get(fence).startsWith("```")) {
                throw new AssertionError(file + ":" + (i + 1) + ": '" + MARK + "' must be followed by a fenced code block");
            }
            List<String> body = new ArrayList<>();
            int end = fence + 1;
            while (end < lines.size() && !lines.get(end).startsWith("```")) body.add(lines.get(end++));
            if (end >= lines.size()) throw new AssertionError(file + ":" + (fence + 1) + ": the code block is not closed");
            out.add(new Example(file, fence + 1, script(body)));
            i = end;
        }
        return out;
    }

    /** The commands of a block: its prompted lines with their continuations, or the whole block when nothing is prompted. */
    private static String script(List<String> body) {
        boolean prompted = body.stream().anyMatch(l -> l.startsWith("$ "));
        StringBuilder sb = new StringBuilder();
        boolean continues = false;
        for (String l : body) {
            if (!prompted || continues) {
                sb.append(l).append('\n');
            } else if (l.startsWith("$ ")) {
                sb.append(l.substring(2)).append('\n');
            } else {
                continue; // output
            }
            continues = prompted && l.endsWith("\\");
        }
        return sb.toString();
    }

    private void run(Example e) throws Exception {
        Path work = Files.createDirectories(tmp.resolve(e.where().replaceAll("[^A-Za-z0-9.]", "_")));
        List<Path> links = new ArrayList<>();
        try (Stream<Path> top = Files.list(ROOT)) {
            for (Path p : top.toList()) {
                String name = p.getFileName().toString();
                if (name.startsWith(".") || name.equals("gpupool") || name.equals("gpupool-data")) continue;
                links.add(Files.createSymbolicLink(work.resolve(name), p));
            }
        }
        try {
            runIn(work, e);
        } finally {
            for (Path l : links) Files.deleteIfExists(l); // the links only: the repository stays as it is
        }
    }

    private void runIn(Path work, Example e) throws Exception {
        Path launcher = work.resolve("gpupool");
        Files.writeString(launcher, "#!/bin/sh\nexec " + javaCommand() + " \"$@\"\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path out = work.resolve(".out");
        ProcessBuilder pb = new ProcessBuilder("bash", "-e", "-o", "pipefail", "-c", e.script()).directory(work.toFile())
                .redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("PATH", work + File.pathSeparator + System.getenv("PATH"));
        Process p = pb.start();
        boolean ended = p.waitFor(TIMEOUT_S, TimeUnit.SECONDS);
        if (!ended) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String output = Files.readString(out);
        String tail = output.length() > 3000 ? "..." + output.substring(output.length() - 3000) : output;
        assertThat(ended).as("%s: the example did not end within %d s:%n%s%n%s", e.where(), TIMEOUT_S, e.script(), tail).isTrue();
        assertThat(p.exitValue()).as("%s: the example failed:%n%s%noutput:%n%s", e.where(), e.script(), tail).isZero();
    }

    /** This build's command line: the jar when named, else the test's class path (target/classes and the dependencies). */
    private static String javaCommand() {
        String java = "'" + Path.of(System.getProperty("java.home"), "bin", "java") + "'";
        String opts = " --sun-misc-unsafe-memory-access=allow --enable-native-access=ALL-UNNAMED";
        String jar = System.getProperty("gpupool.examples.jar");
        if (jar != null && !jar.isBlank()) return java + opts + " -jar '" + ROOT.resolve(jar) + "'";
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        return java + opts + " -cp '" + cp + "' io.gpupool.cli.Main";
    }
}
