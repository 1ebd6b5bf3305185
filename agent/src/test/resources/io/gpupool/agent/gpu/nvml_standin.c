/*
 * A stand-in for libnvidia-ml.so.1, built with gcc by NvmlBackendTest and loaded through the same FFM
 * code path as the real library. It exports the NVML functions gpupool's agent calls, with nvml.h's
 * signatures, struct layouts and return codes, and answers with known data:
 *
 *   GPU 0  GPU-0a0a0a0a-0000-4000-8000-000000000000  "NVIDIA A100-SXM4-80GB"  bus 0x07
 *          81920 MiB total, 4096 MiB used and 512 MiB reserved (nvmlMemory_t's used counts the reserved in,
 *          nvmlMemory_v2_t's does not), 37 % busy, 45 C, 123.456 W
 *          processes: pid 4242 with 2048 MiB, pid 4343 with NVML_VALUE_NOT_AVAILABLE
 *          NVLink 0 and 1 up to bus 0x0F (GPU 1), link 2 down, link 3 to bus 0x80 (an NVSwitch)
 *   GPU 1  GPU-1b1b1b1b-1111-4111-8111-111111111111  "NVIDIA A100-SXM4-80GB"  bus 0x0F
 *          81920 MiB total, 0 used, 0 % busy, 33 C, power NOT_SUPPORTED, no processes
 *          NVLink 0 and 1 up to bus 0x07 (GPU 0)
 *   driver 550.54.15, CUDA 12040 (only through nvmlSystemGetCudaDriverVersion_v2)
 *
 * Functions whose names start with standin_ are not NVML: the test calls them to change the data
 * (processes, an init failure, a lost GPU).
 */
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_UNKNOWN = 999
};

#define VALUE_NOT_AVAILABLE (~0ULL)
#define MAX_PROCESSES 128
#define MIB (1024ULL * 1024ULL)
#define LINKS 4

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
#define NVML_STRUCT_VERSION_MEMORY_2 ((unsigned int) sizeof(nvmlMemory_v2_t) | (2u << 24))
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

/* The layouts the Java side declares; a mismatch fails the build of this library, not a test at run time. */
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t is 24 bytes");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t is 40 bytes");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t is 24 bytes");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t is 68 bytes");

struct standin_gpu {
    const char *uuid, *name;
    unsigned long long total, used, reserved;
    unsigned int util, temp, milliwatts;
    int power_rc;
    unsigned int bus;
    int link_up[LINKS];
    unsigned int link_bus[LINKS];
    unsigned int nprocs;
    nvmlProcessInfo_t procs[MAX_PROCESSES];
    int lost;
    unsigned int grow_after_size_query; /* processes that "start" right after a size query, once */
};
typedef struct standin_gpu *nvmlDevice_t;

static struct standin_gpu gpus[2];
static int initialized, init_result, init_calls, shutdown_calls, memory_v2;

static void add_process(struct standin_gpu *g, unsigned int pid, unsigned long long bytes) {
    if (g->nprocs >= MAX_PROCESSES) return;
    nvmlProcessInfo_t *p = &g->procs[g->nprocs++];
    p->pid = pid;
    p->usedGpuMemory = bytes;
    p->gpuInstanceId = 0xFFFFFFFFu;
    p->computeInstanceId = 0xFFFFFFFFu;
}

void standin_reset(void) {
    memset(gpus, 0, sizeof gpus);
    initialized = 0;
    init_result = NVML_SUCCESS;
    init_calls = shutdown_calls = 0;
    memory_v2 = 1;

    gpus[0].uuid = "GPU-0a0a0a0a-0000-4000-8000-000000000000";
    gpus[0].name = "NVIDIA A100-SXM4-80GB";
    gpus[0].total = 81920 * MIB;
    gpus[0].used = 4096 * MIB + 65536;
    gpus[0].reserved = 512 * MIB;
    gpus[0].util = 37;
    gpus[0].temp = 45;
    gpus[0].milliwatts = 123456;
    gpus[0].bus = 0x07;
    gpus[0].link_up[0] = gpus[0].link_up[1] = 1;
    gpus[0].link_bus[0] = gpus[0].link_bus[1] = 0x0F;
    gpus[0].link_up[3] = 1;
    gpus[0].link_bus[3] = 0x80;
    add_process(&gpus[0], 4242, 2048 * MIB);
    add_process(&gpus[0], 4343, VALUE_NOT_AVAILABLE);

    gpus[1].uuid = "GPU-1b1b1b1b-1111-4111-8111-111111111111";
    gpus[1].name = "NVIDIA A100-SXM4-80GB";
    gpus[1].total = 81920 * MIB;
    gpus[1].temp = 33;
    gpus[1].power_rc = NVML_ERROR_NOT_SUPPORTED;
    gpus[1].bus = 0x0F;
    gpus[1].link_up[0] = gpus[1].link_up[1] = 1;
    gpus[1].link_bus[0] = gpus[1].link_bus[1] = 0x07;
}

__attribute__((constructor)) static void standin_load(void) { standin_reset(); }

/* ---- test controls ---- */
void standin_fail_init(int rc) { init_result = rc; }
/* 0: nvmlDeviceGetMemoryInfo_v2 answers NOT_SUPPORTED, as on a driver before it (the agent uses v1). */
void standin_memory_v2(int on) { memory_v2 = on; }
int standin_init_calls(void) { return init_calls; }
int standin_shutdown_calls(void) { return shutdown_calls; }
void standin_lose_gpu(unsigned int gpu) { gpus[gpu].lost = 1; }
void standin_clear_processes(unsigned int gpu) { gpus[gpu].nprocs = 0; }
void standin_add_process(unsigned int gpu, unsigned int pid, unsigned long long bytes) { add_process(&gpus[gpu], pid, bytes); }
void standin_grow_after_size_query(unsigned int gpu, unsigned int n) { gpus[gpu].grow_after_size_query = n; }

/* ---- NVML ---- */
#define REQUIRE_INIT() do { if (!initialized) return NVML_ERROR_UNINITIALIZED; } while (0)
#define REQUIRE_GPU(d) do { REQUIRE_INIT(); if ((d) == NULL) return NVML_ERROR_INVALID_ARGUMENT; \
                            if ((d)->lost) return NVML_ERROR_GPU_IS_LOST; } while (0)

nvmlReturn_t nvmlInit_v2(void) {
    init_calls++;
    if (init_result != NVML_SUCCESS) return init_result;
    initialized = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
    REQUIRE_INIT();
    shutdown_calls++;
    initialized = 0;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t rc) {
    switch (rc) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
        case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
        case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
        default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    REQUIRE_INIT();
    if (version == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (length < sizeof "550.54.15") return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(version, "550.54.15");
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version) {
    if (version == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *version = 12040;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    REQUIRE_INIT();
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *count = 2;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    REQUIRE_INIT();
    if (index >= 2 || device == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *device = &gpus[index];
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_string(const char *s, char *buf, unsigned int length) {
    if (buf == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(s) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(buf, s);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length) {
    REQUIRE_INIT();
    if (d == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    return copy_string(d->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length) {
    REQUIRE_GPU(d);
    return copy_string(d->name, name, length);
}

/* The device node's minor number: the driver numbers nodes by probe order, NVML indices by PCI bus id, so the
   stand-in gives them in reverse to show the agent uses the minor, not the index. */
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *minor) {
    REQUIRE_GPU(d);
    if (minor == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *minor = d == &gpus[0] ? 1 : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
    REQUIRE_GPU(d);
    if (m == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    m->total = d->total;
    m->used = d->used + d->reserved;
    m->free = d->total - d->used - d->reserved;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) {
    REQUIRE_GPU(d);
    if (m == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (!memory_v2) return NVML_ERROR_NOT_SUPPORTED;
    if (m->version != NVML_STRUCT_VERSION_MEMORY_2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    m->total = d->total;
    m->reserved = d->reserved;
    m->used = d->used;
    m->free = d->total - d->used - d->reserved;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
    REQUIRE_GPU(d);
    if (u == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    u->gpu = d->util;
    u->memory = d->util / 2;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *temp) {
    REQUIRE_GPU(d);
    if (sensor != 0 || temp == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *temp = d->temp;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *milliwatts) {
    REQUIRE_GPU(d);
    if (milliwatts == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (d->power_rc != NVML_SUCCESS) return d->power_rc;
    *milliwatts = d->milliwatts;
    return NVML_SUCCESS;
}

/* nvml.h's count in/out protocol: too small a count gets INSUFFICIENT_SIZE and the needed count. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos) {
    REQUIRE_GPU(d);
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (*count < d->nprocs) {
        *count = d->nprocs;
        for (; d->grow_after_size_query > 0; d->grow_after_size_query--) add_process(d, 9000 + d->nprocs, 1 * MIB);
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (d->nprocs > 0 && infos == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    memcpy(infos, d->procs, d->nprocs * sizeof(nvmlProcessInfo_t));
    *count = d->nprocs;
    return NVML_SUCCESS;
}

static void fill_pci(nvmlPciInfo_t *pci, unsigned int bus) {
    memset(pci, 0, sizeof *pci);
    pci->domain = 0;
    pci->bus = bus;
    pci->device = 0;
    pci->pciDeviceId = 0x20B210DE;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", 0, bus, 0);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", 0, bus, 0);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci) {
    REQUIRE_GPU(d);
    if (pci == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    fill_pci(pci, d->bus);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *isActive) {
    REQUIRE_GPU(d);
    if (link >= LINKS || isActive == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *isActive = d->link_up[link];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *pci) {
    REQUIRE_GPU(d);
    if (link >= LINKS || pci == NULL || !d->link_up[link]) return NVML_ERROR_INVALID_ARGUMENT;
    fill_pci(pci, d->link_bus[link]);
    return NVML_SUCCESS;
}
