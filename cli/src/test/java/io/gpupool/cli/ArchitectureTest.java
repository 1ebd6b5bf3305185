package io.gpupool.cli;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.gpupool.engine.TenantLedger;
import io.gpupool.engine.state.ClusterState;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static org.assertj.core.api.Assertions.assertThat;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The boundaries docs/architecture.md promises, checked on the compiled main classes of every module the
 * command bundles: drivers read the engine's state and never change it (only the engine's own round and the
 * batch placers it calls, whose what-ifs roll back, do), the modules depend inward without cycles, and the
 * server talks to agents only through the protocol package.
 */
class ArchitectureTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        // the other modules' classes are directories under `mvn test` and jars under `mvn verify`: read both
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.gpupool");
        for (String module : List.of("model", "engine", "sim", "optimize", "predict", "agent", "store", "server", "k8s", "cli")) {
            assertThat(classes.containPackage("io.gpupool." + module)).as("classes of module " + module + " were read").isTrue();
        }
    }

    /** What changes the cluster's capacity state or a tenant's account. */
    private static final Set<String> CLUSTER_MUTATORS = Set.of("addNode", "apply", "reinstate", "release", "takeHost",
            "releaseHost", "setCordoned", "setHealthy", "checkpoint", "rollback", "commit");
    private static final Set<String> LEDGER_MUTATORS = Set.of("reconfigure", "setCapacity", "advance", "charge");

    private static DescribedPredicate<JavaCall<?>> mutatorOf(Class<?> owner, Set<String> names) {
        return DescribedPredicate.describe("a call of " + owner.getSimpleName() + "." + names,
                call -> call.getTargetOwner().isEquivalentTo(owner) && names.contains(call.getName()));
    }

    @Test
    void driversNeverChangeTheEnginesState() {
        noClasses().that().resideOutsideOfPackages("io.gpupool.engine..", "io.gpupool.optimize..")
                .should().callMethodWhere(mutatorOf(ClusterState.class, CLUSTER_MUTATORS))
                .orShould().callMethodWhere(mutatorOf(TenantLedger.class, LEDGER_MUTATORS))
                .because("drivers act through Scheduler's methods (submit, schedule, startOn, wouldFitWithout, ...);"
                        + " Scheduler.cluster() is for reading")
                .check(classes);
    }

    @Test
    void modulesDependInwardWithoutCycles() {
        slices().matching("io.gpupool.(*)..").should().beFreeOfCycles().check(classes);
        noClasses().that().resideInAPackage("io.gpupool.model..")
                .should().dependOnClassesThat().resideOutsideOfPackages("io.gpupool.model..", "java..", "org.snakeyaml..", "org.yaml..", "com.fasterxml..")
                .check(classes);
        noClasses().that().resideInAPackage("io.gpupool.engine..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gpupool.sim..", "io.gpupool.server..",
                        "io.gpupool.k8s..", "io.gpupool.agent..", "io.gpupool.store..", "io.gpupool.cli..", "io.gpupool.optimize..", "io.gpupool.predict..")
                .check(classes);
        noClasses().that().resideInAnyPackage("io.gpupool.sim..", "io.gpupool.agent..", "io.gpupool.store..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gpupool.server..", "io.gpupool.k8s..", "io.gpupool.cli..")
                .check(classes);
    }

    @Test
    void theServerTalksToAgentsOnlyThroughTheProtocol() {
        noClasses().that().resideInAPackage("io.gpupool.server..").and().resideOutsideOfPackage("io.gpupool.server.demo..")
                .should().dependOnClassesThat(resideInAPackage("io.gpupool.agent..").and(not(resideInAPackage("io.gpupool.agent.protocol.."))))
                .because("the demo starts in-process agents; everything else speaks the agent protocol")
                .check(classes);
    }
}
