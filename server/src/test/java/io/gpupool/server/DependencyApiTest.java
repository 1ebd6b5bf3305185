package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Dependencies through the API on a static pool (a placed job runs until cancelled, so cancelling is how a job ends
 * here): after, afterany, afterok, afternotok on jobs and arrays, singleton, a dependency that can never be met
 * (failed, or kept with killOnInvalidDep false), unknown jobs refused, and the waits kept across a restart.
 */
class DependencyApiTest {
    @TempDir Path dir;

    private static String submit(TestServer s, String token, String name, String dependency, Object... more) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", name);
        body.put("numGpus", 1);
        body.put("command", List.of("true"));
        if (dependency != null) body.put("dependency", dependency);
        for (int i = 0; i < more.length; i += 2) body.put((String) more[i], more[i + 1]);
        TestServer.Reply r = s.post("/api/v1/jobs", token, body);
        assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        return r.text("id");
    }

    private static String state(TestServer s, String id) {
        return s.get("/api/v1/jobs/" + id, ADMIN).text("state");
    }

    private static void eventuallyState(TestServer s, String id, String state) {
        TestServer.eventually(id + " is " + state, () -> state(s, id).equals(state));
    }

    @Test
    void each_type_waits_for_its_event_and_one_that_can_never_be_met_fails_the_job_with_the_reason() {
        try (TestServer s = TestServer.start(TestServer.options(dir).withPolicy("fcfs"))) {
            String t = s.tenantWithToken("team", 1);
            String parent = submit(s, t, "parent", null);
            eventuallyState(s, parent, "RUNNING");
            String afterStarted = submit(s, t, "a", "after:" + parent);
            String afterAny = submit(s, t, "b", "afterany:" + parent);
            String afterOk = submit(s, t, "c", "afterok:" + parent);
            String afterNotOk = submit(s, t, "d", "afternotok:" + parent);
            String grandchild = submit(s, t, "e", "afterok:" + afterOk);
            eventuallyState(s, afterStarted, "RUNNING");   // its parent had started already
            JsonNode waiting = s.get("/api/v1/jobs/" + afterAny, t).body();
            assertThat(waiting.path("state").asText()).isEqualTo("PENDING");
            assertThat(waiting.path("waitStatus").path("plugin").asText()).isEqualTo("hold");
            assertThat(waiting.path("waitReason").asText()).contains("afterany:" + parent);
            assertThat(waiting.path("dependency").path("waitsFor").get(0).path("job").asText()).isEqualTo(parent);

            assertThat(s.delete("/api/v1/jobs/" + parent, t).status()).isEqualTo(200);   // ends CANCELLED: not ok
            eventuallyState(s, afterAny, "RUNNING");
            eventuallyState(s, afterNotOk, "RUNNING");
            eventuallyState(s, afterOk, "FAILED");
            assertThat(s.get("/api/v1/jobs/" + afterOk, t).text("message")).contains("afterok:" + parent).contains("CANCELLED");
            // the failure cascades: the grandchild's afterok can never be met either
            eventuallyState(s, grandchild, "FAILED");
            assertThat(s.get("/api/v1/jobs/" + grandchild, t).text("message")).contains("afterok:" + afterOk);
            assertThat(s.get("/api/v1/jobs/" + afterNotOk, t).body().path("dependency").isMissingNode()).as("nothing left to wait for").isTrue();

            // on an ended job: met at once, or never at once
            String late = submit(s, t, "f", "afternotok:" + parent);
            eventuallyState(s, late, "RUNNING");
            String never = submit(s, t, "g", "afterok:" + parent);
            eventuallyState(s, never, "FAILED");
            JsonNode events = s.get("/api/v1/jobs/" + never + "/events", t).body().path("events");
            assertThat(events.findValuesAsText("type")).containsExactly("SUBMITTED", "FAILED");
        }
    }

    @Test
    void kept_when_kill_on_invalid_dep_is_off_and_unknown_or_bad_dependencies_are_refused() {
        try (TestServer s = TestServer.start(TestServer.options(dir).withPolicy("fcfs"))) {
            String t = s.tenantWithToken("team", 1);
            String other = s.tenantWithToken("other", 1);
            String parent = submit(s, t, "parent", null);
            String kept = submit(s, t, "kept", "afterok:" + parent, "killOnInvalidDep", false);
            assertThat(s.delete("/api/v1/jobs/" + parent, t).status()).isEqualTo(200);
            TestServer.eventually("kept held with the reason", () -> s.get("/api/v1/jobs/" + kept, t).text("waitReason").contains("can never be met"));
            assertThat(state(s, kept)).isEqualTo("PENDING");

            Map<String, Object> bad = new LinkedHashMap<>(Map.of("numGpus", 1, "command", List.of("true")));
            for (String dep : List.of("afterok:j999", "afterok:" + parent + ":j998", "sometime:" + parent, "afterok", "afterok:x1", "")) {
                bad.put("dependency", dep);
                TestServer.Reply r = s.post("/api/v1/jobs", t, bad);
                assertThat(r.status()).as(dep + ": " + r.body()).isEqualTo(422);
                assertThat(r.text("field")).isEqualTo("dependency");
            }
            bad.put("dependency", "afterok:j999");
            assertThat(s.post("/api/v1/jobs", t, bad).text("rule")).contains("j999");
            // another tenant's job is unknown to a member
            bad.put("dependency", "afterany:" + parent);
            assertThat(s.post("/api/v1/jobs", other, bad).status()).isEqualTo(422);
            bad.put("dependency", 7);
            assertThat(s.post("/api/v1/jobs", t, bad).status()).isEqualTo(400);
            bad.remove("dependency");
            bad.put("killOnInvalidDep", false);
            assertThat(s.post("/api/v1/jobs", t, bad).text("field")).isEqualTo("killOnInvalidDep");
            assertThat(s.get("/api/v1/jobs?state=PENDING", ADMIN).body().path("jobs")).as("only the kept job waits").hasSize(1);
        }
    }

    @Test
    void singleton_waits_for_earlier_jobs_of_its_name_and_arrays_are_waited_for_as_a_whole() {
        try (TestServer s = TestServer.start(TestServer.options(dir).withPolicy("fcfs"))) {
            String t = s.tenantWithToken("team", 1);
            String first = submit(s, t, "nightly", null);
            String second = submit(s, t, "nightly", "singleton");
            String third = submit(s, t, "nightly", "singleton");
            String otherName = submit(s, t, "hourly", "singleton");
            eventuallyState(s, otherName, "RUNNING");
            assertThat(state(s, second)).isEqualTo("PENDING");
            s.delete("/api/v1/jobs/" + first, t);
            eventuallyState(s, second, "RUNNING");
            assertThat(state(s, third)).isEqualTo("PENDING");
            s.delete("/api/v1/jobs/" + second, t);
            eventuallyState(s, third, "RUNNING");

            String array = s.post("/api/v1/jobs", t, Map.of("numGpus", 1, "array", "0-3", "command", List.of("true"))).text("id");
            String afterArray = submit(s, t, "x", "afterany:" + array);
            String afterTask = submit(s, t, "y", "afterany:" + array + "_2");
            String okArray = submit(s, t, "z", "afterok:" + array);
            s.delete("/api/v1/jobs/" + array + "_2", t);
            eventuallyState(s, afterTask, "RUNNING");
            eventuallyState(s, okArray, "FAILED");   // a task did not succeed: afterok on the array can never be met
            assertThat(state(s, afterArray)).isEqualTo("PENDING");
            s.delete("/api/v1/jobs/" + array, t);
            eventuallyState(s, afterArray, "RUNNING");
        }
    }

    @Test
    void waits_survive_a_restart() {
        String parent;
        String child;
        String single;
        try (TestServer s = TestServer.start(TestServer.options(dir).withPolicy("fcfs"))) {
            String t = s.tenantWithToken("team", 1);
            parent = submit(s, t, "p", null);
            child = submit(s, t, "c", "afternotok:" + parent);
            submit(s, t, "one", null);
            single = submit(s, t, "one", "singleton");
            eventuallyState(s, parent, "RUNNING");
        }
        try (TestServer s = TestServer.start(TestServer.options(dir).withPolicy("fcfs"))) {
            TestServer.eventually("a round ran", () -> s.get("/api/v1/jobs/" + child, ADMIN).text("waitReason").contains("afternotok:" + parent));
            assertThat(state(s, single)).isEqualTo("PENDING");
            assertThat(s.delete("/api/v1/jobs/" + parent, ADMIN).status()).isEqualTo(200);
            eventuallyState(s, child, "RUNNING");
            s.server.pool().checkConsistency().join();
        }
    }
}
