package io.gpupool.optimize;

import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every solver's answer passes the engine's own check (each allocation bound through the pipeline's
 * filters and GPU rules onto the cluster state), scores what it claims, leaves the cluster exactly as it
 * was, and is at least as good as greedy (the metaheuristics start from it, CP-SAT is warm-started by it).
 */
class EngineFeasibilityTest {

    static List<String> solvers() {
        return Solvers.names();
    }

    @ParameterizedTest
    @MethodSource("solvers")
    void answersOnGeneratedInstancesPassTheEngineCheck(String name) {
        for (int[] size : new int[][] {{20, 8}, {50, 16}, {200, 32}}) {
            BatchProblem p = InstanceGenerator.problem(size[0], size[1], 7);
            checkAnswer(p, name, new SolveSettings(3, 7, 1, 5));
        }
    }

    @Property(tries = 30, shrinking = ShrinkingMode.BOUNDED)
    void answersOnRandomSmallInstancesPassTheEngineCheck(@ForAll @LongRange(min = 1, max = 1_000_000) long seed) {
        BatchProblem p = SmallInstances.random(seed);
        for (String name : Solvers.names()) checkAnswer(p, name, new SolveSettings(10, seed, 1, 5));
    }

    private static void checkAnswer(BatchProblem p, String name, SolveSettings s) {
        List<String> before = snapshot(p.cluster());
        SolveResult r = Solvers.create(name).solve(p, s);
        assertThat(EngineCheck.verify(p, r.placement())).as(name + ": engine verdict").isNull();
        assertThat(r.score()).as(name + ": claimed score").isEqualTo(Score.of(p, r.placement()));
        assertThat(snapshot(p.cluster())).as(name + ": cluster left as found").isEqualTo(before);
        Score greedy = Solvers.create("greedy").solve(p, s).score();
        if (!name.startsWith("greedy")) assertThat(r.score().compareTo(greedy)).as(name + " vs greedy").isGreaterThanOrEqualTo(0);
        if (r.bound().isPresent()) assertThat(r.bound().getAsLong()).as(name + ": bound").isGreaterThanOrEqualTo(r.score().value());
    }

    private static List<String> snapshot(ClusterState c) {
        List<String> out = new ArrayList<>();
        out.add("used " + c.usedMilli());
        for (NodeState n : c.nodes()) {
            for (int g = 0; g < n.gpuCount(); g++) out.add(n.name() + "/" + g + " " + n.freeMilli(g) + " " + n.freeMemoryMib(g) + " " + n.tasks(g));
        }
        return out;
    }
}
