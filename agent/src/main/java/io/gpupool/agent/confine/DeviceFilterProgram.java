package io.gpupool.agent.confine;

import java.util.ArrayList;
import java.util.List;

/**
 * A BPF_PROG_TYPE_CGROUP_DEVICE program that allows exactly a list of devices, assembled by hand (as runc's and crun's
 * device filters and Slurm's cgroup/v2 plugin do: no compiler, no libbpf). cgroup v2 has no devices controller; the
 * kernel runs such a program on every open/mknod of a device node by a process of the cgroup (and its descendants) and
 * refuses with EPERM when it returns 0.
 *
 * <p>The program reads {@code struct bpf_cgroup_dev_ctx} ({@code u32 access_type} = device type in the low 16 bits,
 * access in the high 16; {@code u32 major}; {@code u32 minor}) from r1 into registers, then for every rule: if the type,
 * the access, the major or the minor does not match, jump to the next rule, else return 1. After the last rule:
 * return 0.
 */
public final class DeviceFilterProgram {

    // opcodes (include/uapi/linux/bpf.h, bpf_common.h)
    private static final int LDX_MEM_W = 0x61;   // BPF_LDX | BPF_MEM | BPF_W: dst = *(u32 *)(src + off)
    private static final int ALU64_AND_K = 0x57; // dst &= imm
    private static final int ALU64_RSH_K = 0x77; // dst >>= imm
    private static final int ALU64_MOV_K = 0xb7; // dst = imm
    private static final int ALU64_MOV_X = 0xbf; // dst = src
    private static final int JMP_JNE_K = 0x55;   // if dst != imm: pc += off
    private static final int JMP_EXIT = 0x95;    // return r0

    static final int DEV_BLOCK = 1;
    static final int DEV_CHAR = 2;
    static final int ACC_MKNOD = 1;
    static final int ACC_READ = 2;
    static final int ACC_WRITE = 4;

    private static final int R0 = 0, R1 = 1, R2 = 2, R3 = 3, R4 = 4, R5 = 5;

    private DeviceFilterProgram() {
    }

    /** The program allowing {@code rules} and nothing else, one long per instruction (little-endian struct bpf_insn). */
    public static long[] allowOnly(List<DeviceRule> rules) {
        List<Long> p = new ArrayList<>();
        // prologue: r2 = type, r3 = access, r4 = major, r5 = minor
        p.add(insn(LDX_MEM_W, R2, R1, 0, 0));
        p.add(insn(ALU64_AND_K, R2, 0, 0, 0xFFFF));
        p.add(insn(LDX_MEM_W, R3, R1, 0, 0));
        p.add(insn(ALU64_RSH_K, R3, 0, 0, 16));
        p.add(insn(LDX_MEM_W, R4, R1, 4, 0));
        p.add(insn(LDX_MEM_W, R5, R1, 8, 0));
        for (DeviceRule r : rules) {
            List<long[]> checks = new ArrayList<>(); // {opcode, dst, src, imm} of the block, jumps patched below
            checks.add(new long[] {JMP_JNE_K, R2, 0, r.type() == 'c' ? DEV_CHAR : DEV_BLOCK});
            int access = access(r.access());
            boolean allAccess = access == (ACC_MKNOD | ACC_READ | ACC_WRITE);
            if (!allAccess) {
                // r1 = requested & ~allowed; anything left over is an access the rule does not grant
                checks.add(new long[] {ALU64_MOV_X, R1, R3, 0});
                checks.add(new long[] {ALU64_AND_K, R1, 0, ~access});
                checks.add(new long[] {JMP_JNE_K, R1, 0, 0});
            }
            if (r.major() != DeviceRule.ANY) checks.add(new long[] {JMP_JNE_K, R4, 0, r.major()});
            if (r.minor() != DeviceRule.ANY) checks.add(new long[] {JMP_JNE_K, R5, 0, r.minor()});
            checks.add(new long[] {ALU64_MOV_K, R0, 0, 1});
            checks.add(new long[] {JMP_EXIT, 0, 0, 0});
            for (int i = 0; i < checks.size(); i++) {
                long[] c = checks.get(i);
                // a failed comparison skips the rest of this block: the next rule (or the final deny)
                int off = c[0] == JMP_JNE_K ? checks.size() - 1 - i : 0;
                p.add(insn((int) c[0], (int) c[1], (int) c[2], off, (int) c[3]));
            }
        }
        p.add(insn(ALU64_MOV_K, R0, 0, 0, 0));
        p.add(insn(JMP_EXIT, 0, 0, 0, 0));
        long[] out = new long[p.size()];
        for (int i = 0; i < out.length; i++) out[i] = p.get(i);
        return out;
    }

    /** struct bpf_insn {u8 code; u8 dst_reg:4, src_reg:4; s16 off; s32 imm} as a little-endian 64-bit word. */
    static long insn(int opcode, int dst, int src, int off, int imm) {
        return (opcode & 0xFFL) | ((dst & 0xFL) << 8) | ((src & 0xFL) << 12) | ((off & 0xFFFFL) << 16) | ((imm & 0xFFFF_FFFFL) << 32);
    }

    private static int access(String s) {
        int a = 0;
        if (s.indexOf('m') >= 0) a |= ACC_MKNOD;
        if (s.indexOf('r') >= 0) a |= ACC_READ;
        if (s.indexOf('w') >= 0) a |= ACC_WRITE;
        return a;
    }
}
