package io.gpupool.server;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server talks to its agents only through the agent protocol's package: its main code names nothing else of the
 * agent module, but for the demo, which starts in-process agents.
 */
class AgentDependencyTest {
    private static final Path MAIN = Path.of("src/main/java");
    private static final Pattern AGENT_NAME = Pattern.compile("io\\.gpupool\\.agent\\.[\\w.*]+");
    private static final String PROTOCOL = "io.gpupool.agent.protocol.";
    /** What a file outside the protocol may name, by file: the demo starts agents in this process. */
    private static final Map<String, Set<String>> ALLOWED = Map.of(
            "io/gpupool/server/demo/DemoDriver.java", Set.of("io.gpupool.agent.AgentLauncher", "io.gpupool.agent.node.NodeAgent"));

    @Test
    void serverMainCodeNamesOnlyTheProtocolOfTheAgentModule() throws IOException {
        List<String> offending = new ArrayList<>();
        int protocolUses = 0;
        try (Stream<Path> files = Files.walk(MAIN)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String file = MAIN.relativize(f).toString().replace('\\', '/');
                Matcher m = AGENT_NAME.matcher(Files.readString(f));
                while (m.find()) {
                    String name = m.group();
                    if (name.startsWith(PROTOCOL)) protocolUses++;
                    else if (!ALLOWED.getOrDefault(file, Set.of()).contains(name)) offending.add(file + ": " + name);
                }
            }
        }
        assertThat(offending).isEmpty();
        assertThat(protocolUses).as("the scan reads the server's sources").isPositive();
    }
}
