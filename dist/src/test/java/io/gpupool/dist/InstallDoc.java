package io.gpupool.dist;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The runnable steps of docs/install.md: every {@code ```bash} block, each right after a {@code <!-- step: NAME -->}
 * line (run by InstallDocTest) or a {@code <!-- not run: WHY -->} line. A bash block with neither is an error, so a
 * command added to the page without a test fails the build.
 */
record InstallDoc(Map<String, String> steps) {
    private static final Pattern STEP = Pattern.compile("<!-- step: ([a-z0-9-]+) -->");
    private static final Pattern NOT_RUN = Pattern.compile("<!-- not run: .+ -->");

    static InstallDoc read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        Map<String, String> steps = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).equals("```bash")) continue;
            String marker = i > 0 ? lines.get(i - 1).trim() : "";
            int end = i + 1;
            StringBuilder body = new StringBuilder();
            while (end < lines.size() && !lines.get(end).equals("```")) body.append(lines.get(end++)).append('\n');
            if (end == lines.size()) throw new IllegalStateException(file + ":" + (i + 1) + ": bash block without its closing ```");
            Matcher m = STEP.matcher(marker);
            if (m.matches()) {
                if (steps.put(m.group(1), body.toString()) != null)
                    throw new IllegalStateException(file + ":" + i + ": step '" + m.group(1) + "' appears twice");
            } else if (!NOT_RUN.matcher(marker).matches()) {
                throw new IllegalStateException(file + ":" + (i + 1) + ": a bash block needs '<!-- step: NAME -->' (run by InstallDocTest) "
                        + "or '<!-- not run: WHY -->' on the line before it");
            }
            i = end;
        }
        return new InstallDoc(steps);
    }

    String step(String name) {
        String s = steps.get(name);
        if (s == null) throw new IllegalStateException("docs/install.md has no step '" + name + "' (steps: " + steps.keySet() + ")");
        return s;
    }
}
