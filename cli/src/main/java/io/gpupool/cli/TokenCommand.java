package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;

/** Mints a member token for a tenant (admin). */
@Command(name = "token", description = "Create a member token for a tenant (needs an admin token). With --unix-user, every job submitted "
        + "with it runs as that Unix account on the nodes, whatever the job asks. The token is shown once.")
public final class TokenCommand extends ClientCommand {

    @Parameters(paramLabel = "TENANT", description = "The tenant the token submits for.")
    String tenant;

    @Option(names = "--unix-user", paramLabel = "USER", description = "Bind the token to this Unix account (root is refused unless the server "
            + "runs with --allow-root-jobs).")
    String unixUser;

    @Option(names = "--label", paramLabel = "TEXT", description = "What the token is for, e.g. ci or alice's laptop.")
    String label;

    @Override
    public Integer call() {
        Map<String, Object> body = new LinkedHashMap<>();
        if (label != null) body.put("label", label);
        if (unixUser != null) body.put("unixUser", unixUser);
        JsonNode t = api().post("/api/v1/tenants/" + tenant + "/tokens", body, null);
        PrintWriter out = out();
        out.println(t.path("token").asText());
        spec.commandLine().getErr().println("member token " + t.path("id").asText() + " for tenant " + t.path("tenant").asText()
                + (t.hasNonNull("unixUser") ? ", jobs run as " + t.path("unixUser").asText() : ", not bound to a Unix account")
                + " (shown once; only its hash is kept)");
        out.flush();
        return 0;
    }
}
