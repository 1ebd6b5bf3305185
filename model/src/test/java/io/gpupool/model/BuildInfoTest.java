package io.gpupool.model;

import org.junit.jupiter.api.Test;

import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

class BuildInfoTest {

    private static Properties props(String version, String commit, String dirty) {
        Properties p = new Properties();
        p.setProperty("version", version);
        p.setProperty("commit", commit);
        p.setProperty("dirty", dirty);
        return p;
    }

    @Test
    void this_build_carries_the_maven_version() {
        // the test runs from target/classes, filtered by the build: never the placeholder
        assertThat(BuildInfo.current().version()).matches("\\d+\\.\\d+\\.\\d+.*");
    }

    @Test
    void a_build_with_git_names_its_commit_and_whether_the_tree_was_modified() {
        BuildInfo b = BuildInfo.of(props("1.2.0", "660cb4c077", "true"));
        assertThat(b).isEqualTo(new BuildInfo("1.2.0", "660cb4c077", true));
        assertThat(b.describe()).isEqualTo("1.2.0 (commit 660cb4c077, modified)");
        assertThat(BuildInfo.of(props("1.2.0", "660cb4c077", "false")).describe()).isEqualTo("1.2.0 (commit 660cb4c077)");
    }

    @Test
    void a_build_without_git_history_reports_the_commit_as_unknown() {
        // what Maven leaves when git-commit-id finds no .git (a source tarball)
        BuildInfo b = BuildInfo.of(props("1.2.0", "${git.commit.id.abbrev}", "${git.dirty}"));
        assertThat(b).isEqualTo(new BuildInfo("1.2.0", "unknown", null));
        assertThat(b.describe()).isEqualTo("1.2.0 (commit unknown)");
        assertThat(BuildInfo.of(new Properties())).isEqualTo(new BuildInfo("unknown", "unknown", null));
    }
}
