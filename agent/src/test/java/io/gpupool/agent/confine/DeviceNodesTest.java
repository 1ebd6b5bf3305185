package io.gpupool.agent.confine;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class DeviceNodesTest {

    @Test
    void findsNvidiaUvmsDynamicMajorAmongCharacterDevices() {
        String devices = "Character devices:\n  1 mem\n195 nvidia-frontend\n195 nvidiactl\n508 nvidia-uvm\n510 nvidia-caps\n\n"
                + "Block devices:\n  7 loop\n509 nvidia-uvm\n";
        assertThat(DeviceNodes.uvmMajor(devices)).hasValue(508);
        assertThat(DeviceNodes.uvmMajor("Character devices:\n  1 mem\n")).isEmpty();
    }

    @Test
    void aJobWithGpusGetsItsNodesAndTheControlDevicesOneWithoutGetsNeither() {
        DeviceNodes nodes = DeviceNodes.fake(java.nio.file.Path.of("/x"));
        List<String> lines = nodes.allowedFor(List.of(3)).stream().map(DeviceRule::v1Line).toList();
        assertThat(lines).contains("c 1:3 rwm", "c 136:* rwm", "c 195:3 rwm", "c 195:255 rwm", "c 195:254 rwm")
                .doesNotContain("c 195:0 rwm");
        assertThat(nodes.allowedFor(List.of()).stream().map(DeviceRule::v1Line)).noneMatch(l -> l.startsWith("c 195:"));
        assertThat(nodes.gpuNode(3)).hasToString("/x/nvidia3");
    }

    @Test
    void makedevSplitsMajorAndMinorAsGlibcDoes() {
        assertThat(DeviceNodes.makedev(195, 0)).isEqualTo(0xC300L);
        assertThat(DeviceNodes.makedev(195, 255)).isEqualTo(0xC3FFL);
        assertThat(DeviceNodes.makedev(4095, 256)).isEqualTo(0xFFF00L | (1L << 20));
    }
}
