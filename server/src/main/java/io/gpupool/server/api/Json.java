package io.gpupool.server.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.http.Context;

/** JSON in and out of the API (one mapper for all). */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper().setSerializationInclusion(JsonInclude.Include.ALWAYS);

    private Json() {}

    static String write(Object o) {
        try {
            return MAPPER.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot render JSON", e);
        }
    }

    static void send(Context ctx, int status, Object body) {
        ctx.status(status).contentType("application/json").result(write(body));
    }
}
