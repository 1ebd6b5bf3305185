package io.gpupool.server;

import io.gpupool.agent.protocol.AgentProtocolVersion;
import io.gpupool.server.TestServer.Reply;
import io.gpupool.server.api.RouteTable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static io.gpupool.server.TestServer.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/** Who may do what: 401 without a token, tenants kept apart, agents kept to the node-facing calls, rate limits. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AccessTest {
    @TempDir static Path dir;
    TestServer s;
    String alice;   // member of tenant "a"
    String bob;     // member of tenant "b"
    String agent;
    String bobsJob;

    @BeforeAll
    void start() {
        s = TestServer.start(TestServer.options(dir).withRateLimit(20));
        alice = s.tenantWithToken("a", 1);
        bob = s.tenantWithToken("b", 1);
        agent = s.post("/api/v1/agent-tokens", ADMIN, Map.of("label", "rack-1")).text("token");
        bobsJob = s.post("/api/v1/jobs", bob, Map.of("name", "secret-b", "numGpus", 1, "command", List.of("b.sh"))).text("id");
    }

    @AfterAll
    void stop() {
        s.close();
    }

    /** An agent's call: it announces the protocol version it speaks, as the agent does. */
    private static final Map<String, String> PROTOCOL = Map.of(AgentProtocolVersion.HEADER, Integer.toString(AgentProtocolVersion.CURRENT));

    private Reply agentPost(String path, String token, Object body) {
        return s.call("POST", path, token, body, PROTOCOL);
    }

    private static String concrete(String path) {
        return path.replace("{id}", "j1").replace("{name}", "a");
    }

    @Test
    void every_api_route_answers_401_without_a_valid_token() {
        List<String> checked = new ArrayList<>();
        for (RouteTable.Route r : s.server.api().routes().all()) {
            if (!r.path().startsWith("/api/")) continue;
            if (r.path().equals("/api/v1/version")) {
                // the one public API route (the build's version, as Kubernetes' /version): any token or none
                for (String token : new String[] {null, "gp_nope_nope", ""}) assertThat(s.call("GET", r.path(), token, null, Map.of()).status()).isEqualTo(200);
                continue;
            }
            for (String token : new String[] {null, "gp_nope_nope", ""}) {
                Reply reply = s.call(r.method().toUpperCase(), concrete(r.path()), token, r.method().equals("get") || r.method().equals("delete") ? null : "{}",
                        r.path().startsWith("/api/v1/agent/") ? PROTOCOL : Map.of());
                assertThat(reply.status()).as("%s %s with token %s", r.method(), r.path(), token).isEqualTo(401);
                assertThat(reply.text("field")).isEqualTo("Authorization");
                assertThat(reply.raw().headers().firstValue("WWW-Authenticate")).isPresent();
            }
            checked.add(r.path());
        }
        assertThat(checked).hasSizeGreaterThan(20);
    }

    @Test
    void a_member_neither_sees_nor_cancels_another_tenants_job() {
        String mine = s.post("/api/v1/jobs", alice, Map.of("numGpus", 1, "command", List.of("a.sh"))).text("id");
        for (String path : List.of("/api/v1/jobs/" + bobsJob, "/api/v1/jobs/" + bobsJob + "/events", "/api/v1/jobs/" + bobsJob + "/logs")) {
            Reply r = s.get(path, alice);
            assertThat(r.status()).as(path).isEqualTo(404);
            assertThat(r.raw().body()).doesNotContain("secret-b");
        }
        assertThat(s.delete("/api/v1/jobs/" + bobsJob, alice).status()).isEqualTo(404);
        assertThat(s.get("/api/v1/jobs/" + bobsJob, bob).text("state")).isIn("PENDING", "RUNNING");
        assertThat(s.get("/api/v1/jobs", alice).body().path("jobs").findValuesAsText("id")).containsExactly(mine);
        assertThat(s.get("/api/v1/jobs?tenant=b", alice).status()).isEqualTo(403);
        Reply forB = s.post("/api/v1/jobs", alice, Map.of("tenant", "b", "numGpus", 1, "command", List.of("x")));
        assertThat(forB.status()).isEqualTo(403);
        // the pool view shows other tenants' GPU use, never their job ids or names
        eventually("bob's job shows in the pool", () -> s.get("/api/v1/pool", ADMIN).raw().body().contains(bobsJob));
        String pool = s.get("/api/v1/pool", alice).raw().body();
        assertThat(pool).doesNotContain(bobsJob).doesNotContain("secret-b").contains("\"tenant\":\"b\"");
        assertThat(s.get("/api/v1/jobs/" + bobsJob, ADMIN).status()).isEqualTo(200);
        s.delete("/api/v1/jobs/" + mine, alice);
    }

    @Test
    void agent_tokens_cannot_submit_read_jobs_or_administer() {
        Reply submit = s.post("/api/v1/jobs", agent, Map.of("tenant", "a", "numGpus", 1, "command", List.of("x")));
        assertThat(submit.status()).isEqualTo(403);
        assertThat(submit.text("rule")).contains("agent tokens cannot submit jobs");
        assertThat(s.get("/api/v1/jobs/" + bobsJob, agent).status()).isEqualTo(403);
        assertThat(s.get("/api/v1/jobs", agent).status()).isEqualTo(403);
        assertThat(s.delete("/api/v1/jobs/" + bobsJob, agent).status()).isEqualTo(403);
        assertThat(s.post("/api/v1/tenants", agent, Map.of("name", "evil")).status()).isEqualTo(403);
        assertThat(s.post("/api/v1/agent-tokens", agent, Map.of()).status()).isEqualTo(403);
        assertThat(s.call("PUT", "/api/v1/config", agent, Map.of("policy", "fcfs"), Map.of()).status()).isEqualTo(403);
        assertThat(s.get("/api/v1/nodes", agent).status()).isEqualTo(200);
        assertThat(s.get("/api/v1/events", agent).status()).isEqualTo(403); // was a stream of pool snapshots
    }

    @Test
    void a_node_credential_acts_for_its_own_node_only_and_a_new_registration_revokes_it() throws Exception {
        TestNode n1 = new TestNode(s.base, agent, "acc-n1", "1xT4");
        TestNode n2 = new TestNode(s.base, agent, "acc-n2", "1xT4");
        String c1 = n1.register().nodeToken();
        n2.register();
        Map<String, Object> own = report("acc-n1");
        Reply other = agentPost("/api/v1/agent/nodes/acc-n2/report", c1, report("acc-n2"));
        assertThat(other.status()).isEqualTo(403);
        assertThat(other.text("rule")).contains("acts for node 'acc-n1' only");
        assertThat(agentPost("/api/v1/agent/nodes/acc-n1/report", agent, own).status()).isEqualTo(403); // a join token only registers
        assertThat(agentPost("/api/v1/agent/nodes/acc-n1/report", ADMIN, own).status()).isEqualTo(403);
        assertThat(s.post("/api/v1/jobs", c1, Map.of("tenant", "a", "numGpus", 1, "command", List.of("x"))).status()).isEqualTo(403);
        assertThat(s.get("/api/v1/jobs/" + bobsJob, c1).status()).isEqualTo(403);
        assertThat(agentPost("/api/v1/agent/register", c1, Map.of("node_name", "acc-n3")).status()).isEqualTo(403);
        assertThat(s.post("/api/v1/agent-tokens", c1, Map.of()).status()).isEqualTo(403);
        assertThat(s.get("/api/v1/events", c1).status()).isEqualTo(403);
        assertThat(agentPost("/api/v1/agent/nodes/acc-n1/report", c1, own).status()).isEqualTo(200);
        String c1again = n1.register().nodeToken();
        assertThat(agentPost("/api/v1/agent/nodes/acc-n1/report", c1, own).status()).isEqualTo(401); // revoked
        assertThat(agentPost("/api/v1/agent/nodes/acc-n1/report", c1again, own).status()).isEqualTo(200);
        assertThat(agentPost("/api/v1/agent/nodes/acc-n1/report", c1again, report("acc-n2")).status()).isEqualTo(422); // node_id must be the path's
    }

    private static Map<String, Object> report(String node) {
        return Map.of("node_id", node, "applied_desired_version", -1, "gpus", List.of(), "running", List.of(), "statuses", List.of(), "logs", List.of());
    }

    @Test
    void members_cannot_administer_or_act_as_agents() {
        assertThat(s.post("/api/v1/tenants", alice, Map.of("name", "mine")).status()).isEqualTo(403);
        assertThat(s.post("/api/v1/tenants/a/tokens", alice, Map.of()).status()).isEqualTo(403);
        assertThat(s.post("/api/v1/nodes/a100-80gb-0000/drain", alice, null).status()).isEqualTo(403);
        assertThat(s.call("PUT", "/api/v1/config", alice, Map.of("policy", "fcfs"), Map.of()).status()).isEqualTo(403);
        assertThat(agentPost("/api/v1/agent/register", alice, Map.of("node_name", "x")).status()).isEqualTo(403);
        assertThat(agentPost("/api/v1/agent/nodes/a100-80gb-0000/report", alice, Map.of("node_id", "a100-80gb-0000")).status()).isEqualTo(403);
        assertThat(s.get("/api/v1/whoami", alice).body().path("tenant").asText()).isEqualTo("a");
    }

    @Test
    void tokens_are_stored_only_as_hashes() throws Exception {
        String issued = s.post("/api/v1/tenants/a/tokens", ADMIN, Map.of("label", "hash-check")).text("token");
        List<String> stored = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("gpupool.db"));
             ResultSet rs = c.createStatement().executeQuery("SELECT hash, id, label FROM tokens")) {
            while (rs.next()) stored.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getString(3));
        }
        assertThat(stored).isNotEmpty().noneMatch(row -> row.contains(issued) || row.contains(ADMIN) || row.contains(alice));
        assertThat(stored).anyMatch(row -> row.startsWith(io.gpupool.server.auth.Tokens.hash(issued)));
        byte[] file = Files.readAllBytes(dir.resolve("gpupool.db"));
        assertThat(new String(file, java.nio.charset.StandardCharsets.ISO_8859_1)).doesNotContain(issued);
    }

    @Test
    void a_token_over_its_rate_limit_gets_429_with_retry_after() throws Exception {
        // one request per 4 s and a bucket of one: a token's second request within 4 s is refused, whatever the
        // machine's speed (the buckets' arithmetic and their independence per token: RateLimiterTest, on its own clock)
        try (TestServer slow = TestServer.start(TestServer.options(Files.createTempDirectory(dir, "slow")).withRateLimit(0.25))) {
            assertThat(slow.get("/api/v1/whoami", ADMIN).status()).isEqualTo(200);
            Reply refused = slow.get("/api/v1/whoami", ADMIN);
            assertThat(refused.status()).isEqualTo(429);
            assertThat(refused.raw().headers().firstValue("Retry-After")).hasValue("4");
        }
    }
}
