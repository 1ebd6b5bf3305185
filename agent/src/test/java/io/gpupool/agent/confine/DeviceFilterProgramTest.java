package io.gpupool.agent.confine;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter program's logic, run by a small interpreter of the instructions it uses (the kernel's verifier and the
 * real hook are exercised by the confined-job tests).
 */
class DeviceFilterProgramTest {

    private static final int CHAR = DeviceFilterProgram.DEV_CHAR, BLOCK = DeviceFilterProgram.DEV_BLOCK;
    private static final int R = DeviceFilterProgram.ACC_READ, W = DeviceFilterProgram.ACC_WRITE, M = DeviceFilterProgram.ACC_MKNOD;

    /** Runs {@code program} on a bpf_cgroup_dev_ctx; returns r0. */
    static long run(long[] program, int type, int access, int major, int minor) {
        long[] reg = new long[11];
        int[] ctx = {type | (access << 16), major, minor};
        for (int pc = 0; pc < program.length; pc++) {
            long insn = program[pc];
            int op = (int) (insn & 0xFF), dst = (int) ((insn >> 8) & 0xF), src = (int) ((insn >> 12) & 0xF);
            int off = (short) ((insn >> 16) & 0xFFFF);
            long imm = (int) (insn >>> 32); // sign-extended, as the kernel does for 64-bit operations
            switch (op) {
                case 0x61 -> {
                    assertThat(src).as("only the context is read").isEqualTo(1);
                    reg[dst] = Integer.toUnsignedLong(ctx[off / 4]);
                }
                case 0x57 -> reg[dst] &= imm;
                case 0x77 -> reg[dst] >>>= imm;
                case 0xb7 -> reg[dst] = imm;
                case 0xbf -> reg[dst] = reg[src];
                case 0x55 -> {
                    if (reg[dst] != imm) pc += off;
                }
                case 0x95 -> {
                    return reg[0];
                }
                default -> throw new AssertionError("unexpected opcode " + Integer.toHexString(op));
            }
        }
        throw new AssertionError("ran off the end of the program");
    }

    @Test
    void allowsExactlyTheListedDevicesAndAccesses() {
        long[] p = DeviceFilterProgram.allowOnly(List.of(DeviceRule.chr(1, 3, "null"), DeviceRule.chr(195, 0, "nvidia0"),
                DeviceRule.chr(136, DeviceRule.ANY, "pts"), new DeviceRule('c', 10, 200, "r", "read-only")));
        assertThat(run(p, CHAR, R | W, 195, 0)).isEqualTo(1);
        assertThat(run(p, CHAR, R | W, 195, 1)).as("another GPU").isZero();
        assertThat(run(p, CHAR, R, 195, 255)).as("not listed").isZero();
        assertThat(run(p, BLOCK, R, 1, 3)).as("a block device with a listed character device's numbers").isZero();
        assertThat(run(p, CHAR, R | W, 136, 7)).as("any minor").isEqualTo(1);
        assertThat(run(p, CHAR, R, 10, 200)).isEqualTo(1);
        assertThat(run(p, CHAR, R | W, 10, 200)).as("write on a read-only rule").isZero();
        assertThat(run(p, CHAR, M, 10, 200)).isZero();
        assertThat(run(p, CHAR, R | W | M, 1, 3)).isEqualTo(1);
    }

    @Test
    void anEmptyListDeniesEverything() {
        long[] p = DeviceFilterProgram.allowOnly(List.of());
        assertThat(p).hasSize(8);
        assertThat(run(p, CHAR, R, 1, 3)).isZero();
    }

    @Test
    void encodesInstructionsAsStructBpfInsn() {
        // r2 = *(u32 *)(r1 + 8): code 0x61, dst 2 in the low nibble, src 1 in the high one, off 8, imm 0
        assertThat(DeviceFilterProgram.insn(0x61, 2, 1, 8, 0)).isEqualTo(0x0000_0000_0008_1261L);
        // if r4 != 195 goto +3
        assertThat(DeviceFilterProgram.insn(0x55, 4, 0, 3, 195)).isEqualTo(0x0000_00C3_0003_0455L);
        assertThat(DeviceFilterProgram.insn(0x57, 1, 0, 0, -7) >>> 32).isEqualTo(0xFFFF_FFF9L);
    }
}
