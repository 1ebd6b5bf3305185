package io.gpupool.server.core;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.model.GangShape;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuMemorySizer;
import io.gpupool.model.GpuShare;
import io.gpupool.model.ModelSize;
import io.gpupool.model.SpecException;
import io.gpupool.predict.sizing.AdvisorMemorySizer;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A job request's optional {@code model} ({@code {"params": "7B", "mode": "train", "precision": "bf16"}}): when the
 * request gives no {@code gpuMemMib}, the sizing advisor fills it for a GPU share, and narrows {@code gpuTypes} to
 * the models that hold the job for whole GPUs. The filled request is what is stored and shown.
 */
final class ModelSizing {
    static final String FIELD = "model";
    private static final Set<String> FIELDS = Set.of("params", "mode", "precision");

    /** What the request asks of each GPU after sizing. */
    record Filled(long gpuMemMib, List<String> gpuTypes) {}

    private ModelSizing() {}

    static Filled fill(Fields request, GpuCatalog catalog, int numGpus, int gpusPerReplica, int gpuMilli, long gpuMemMib, List<String> gpuTypes) {
        request.object(FIELD, FIELDS.size());
        Fields m = Fields.of(request.raw(FIELD), FIELD, FIELDS);
        if (!m.has("params")) throw ServiceException.invalid(m.path("params"), "is required: the parameter count, e.g. 7B");
        String params = m.string("params", null, 32), mode = m.string("mode", null, 16), precision = m.string("precision", null, 16);
        GangShape shape = gpusPerReplica > 0 ? new GangShape(numGpus / gpusPerReplica, gpusPerReplica)
                : GangShape.forGpuCount(numGpus, GangShape.DEFAULT_MAX_GPUS_PER_REPLICA);
        GpuShare share = new GpuShare(gpuMilli, 0);
        try {
            ModelSize size = new ModelSize(params, mode, precision);
            GpuMemorySizer.Need need = new AdvisorMemorySizer(catalog).need(size, shape);   // checks the size even when not used
            if (gpuMemMib > 0) return new Filled(gpuMemMib, gpuTypes);   // the job said how much: keep it
            Set<String> allowed = need.allowedModels(share, new LinkedHashSet<>(gpuTypes));
            return new Filled(need.share(share).memoryMib(), new ArrayList<>(allowed));
        } catch (SpecException e) {
            throw ServiceException.invalid(m.path(e.field()), e.rule());
        }
    }
}
