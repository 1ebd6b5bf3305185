package io.gpupool.agent.run;

import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JobEnvironmentTest {

    GpuInfo a = new GpuInfo(0, "GPU-a", "NVIDIA L40S", "L40S", 46068, List.of());
    GpuInfo b = new GpuInfo(1, "GPU-b", "NVIDIA L40S", "L40S", 46068, List.of());
    Map<String, GpuInfo> gpus = Map.of("GPU-a", a, "GPU-b", b);
    Map<String, String> agentEnv = Map.of("PATH", "/usr/bin:/bin", "HOME", "/home/agent", "GPUPOOL_TOKEN", "secret",
            "AWS_SECRET_ACCESS_KEY", "also-secret");

    @Test
    void onlyPassThroughVariablesOfTheAgentReachTheJob() {
        JobLaunch l = new JobLaunch("j", 2, List.of("true"), Map.of("MY_VAR", "1", "PATH", "/opt/bin"), null, List.of(GrantedGpu.whole("GPU-b")));
        Map<String, String> env = JobEnvironment.of(l, gpus, agentEnv, JobEnvironment.DEFAULT_PASS_THROUGH);
        assertThat(env).containsEntry("HOME", "/home/agent").containsEntry("PATH", "/opt/bin").containsEntry("MY_VAR", "1")
                .containsEntry("CUDA_VISIBLE_DEVICES", "GPU-b").containsEntry("GPUPOOL_JOB_ID", "j").containsEntry("GPUPOOL_ATTEMPT", "2")
                .doesNotContainKeys("GPUPOOL_TOKEN", "AWS_SECRET_ACCESS_KEY", "CUDA_DEVICE_SM_LIMIT", "GPUPOOL_MEMORY_FRACTION");
    }

    @Test
    void theArrayVariablesTheServerSetsArePassedOnAndOtherGpupoolNamesAreDropped() {
        JobLaunch l = new JobLaunch("j3_7", 1, List.of("true"), Map.of("GPUPOOL_ARRAY_JOB_ID", "j3", "GPUPOOL_ARRAY_TASK_ID", "7",
                "GPUPOOL_JOB_ID", "forged", "GPUPOOL_OTHER", "x"), null, List.of(GrantedGpu.whole("GPU-a")));
        Map<String, String> env = JobEnvironment.of(l, gpus, agentEnv, JobEnvironment.DEFAULT_PASS_THROUGH);
        assertThat(env).containsEntry("GPUPOOL_ARRAY_JOB_ID", "j3").containsEntry("GPUPOOL_ARRAY_TASK_ID", "7")
                .containsEntry("GPUPOOL_JOB_ID", "j3_7").doesNotContainKey("GPUPOOL_OTHER");
    }

    @Test
    void aComputeOnlyShareGetsTheMatchingPartOfMemory() {
        JobLaunch l = new JobLaunch("j", 0, List.of("true"), Map.of("CUDA_DEVICE_SM_LIMIT", "100"), null, List.of(new GrantedGpu("GPU-a", 333, 0)));
        Map<String, String> env = JobEnvironment.of(l, gpus, agentEnv, JobEnvironment.DEFAULT_PASS_THROUGH);
        assertThat(env).containsEntry("CUDA_DEVICE_MEMORY_LIMIT_0", "15340m") // floor(46068 * 0.333)
                .containsEntry("CUDA_DEVICE_SM_LIMIT", "34") // 33.3 % rounded up; the job's own value is replaced
                .containsEntry("GPUPOOL_MEMORY_FRACTION", "0.3329")
                .containsEntry("GPUPOOL_MEMORY_FRACTION_0", "0.3329");
    }

    @Test
    void aGpuNotOnThisNodeIsRefused() {
        JobLaunch l = new JobLaunch("j", 0, List.of("true"), Map.of(), null, List.of(GrantedGpu.whole("GPU-zzz")));
        assertThatThrownBy(() -> JobEnvironment.of(l, gpus, agentEnv, List.of()))
                .isInstanceOf(SpecException.class).hasMessage("job j#0: field 'gpus': GPU GPU-zzz is not on this node");
    }

    @Test
    void launchesAreValidated() {
        assertThatThrownBy(() -> new JobLaunch("j", 0, List.of(), Map.of(), null, List.of()))
                .hasMessageContaining("field 'command': must name a program");
        assertThatThrownBy(() -> new JobLaunch("j", 0, List.of("x"), Map.of(), null, List.of(GrantedGpu.whole("G"), GrantedGpu.whole("G"))))
                .hasMessageContaining("GPU G is granted twice");
        assertThatThrownBy(() -> new GrantedGpu("G", 0, 0)).isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("milli"));
        assertThatThrownBy(() -> new GrantedGpu("G", 1001, 0)).isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("milli"));
        assertThat(new GrantedGpu("G", 1, 0).milli()).isEqualTo(1);
        assertThatThrownBy(() -> new JobLaunch(" ", 0, List.of("x"), Map.of(), null, List.of())).hasMessageContaining("job_id");
    }

    @Test
    void aMemoryFractionIsRoundedDownToFourDecimals() {
        assertThat(JobEnvironment.fractionText(1.0)).isEqualTo("1.0000");
        assertThat(JobEnvironment.fractionText(0.5)).isEqualTo("0.5000");
        assertThat(JobEnvironment.fractionText(1.0 / 3)).isEqualTo("0.3333");
        assertThat(JobEnvironment.fractionText(0.99999)).as("never above the grant").isEqualTo("0.9999");
        assertThat(JobEnvironment.fractionText(0.0625)).isEqualTo("0.0625");
        assertThat(JobEnvironment.fractionText(0.00004)).isEqualTo("0.0000");
    }
}
