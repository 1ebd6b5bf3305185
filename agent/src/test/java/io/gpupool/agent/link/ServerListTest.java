package io.gpupool.agent.link;

import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;

import java.net.URI;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which replica a client with several server URLs talks to, and where it goes after a failure or a standby's answer. */
class ServerListTest {
    private static final URI A = URI.create("http://a:8080");
    private static final URI B = URI.create("http://b:8080");
    private static final URI C = URI.create("https://c:8443");

    @Test
    void parses_comma_separated_urls_and_names_the_option_in_errors() {
        ServerList l = ServerList.parse(" http://a:8080/, http://b:8080 ,https://c:8443", "--server");
        assertThat(l.all()).containsExactly(A, B, C);
        assertThat(l.current()).isEqualTo(A);
        assertThatThrownBy(() -> ServerList.parse("http://a:8080,ftp://x", "--server")).isInstanceOf(SpecException.class)
                .hasMessageContaining("--server").hasMessageContaining("ftp://x");
        assertThatThrownBy(() -> ServerList.parse(" , ", "GPUPOOL_SERVER")).isInstanceOf(SpecException.class).hasMessageContaining("GPUPOOL_SERVER");
    }

    @Test
    void a_failure_moves_to_the_next_once_even_when_several_calls_report_it() {
        ServerList l = ServerList.parse("http://a:8080,http://b:8080,https://c:8443", "--server");
        l.next(A);
        l.next(A);   // a second call that failed on A: already moved
        assertThat(l.current()).isEqualTo(B);
        l.next(B);
        l.next(C);
        assertThat(l.current()).isEqualTo(A);
    }

    @Test
    void a_standby_answer_leads_to_the_named_active_if_listed_else_to_the_next() {
        ServerList l = ServerList.parse("http://a:8080,http://b:8080,https://c:8443", "--server");
        assertThat(l.follow(A, "https://c:8443/")).isTrue();
        assertThat(l.current()).isEqualTo(C);
        assertThat(l.follow(C, "http://evil:8080")).as("a URL outside the list is never followed").isFalse();
        assertThat(l.current()).isEqualTo(A);
        assertThat(l.follow(A, "")).isFalse();   // no active known yet (a takeover under way)
        assertThat(l.current()).isEqualTo(B);
        assertThat(l.follow(B, "http://b:8080")).as("a standby that names itself: it is taking over; stay").isFalse();
        assertThat(l.current()).isEqualTo(B);
    }
}
