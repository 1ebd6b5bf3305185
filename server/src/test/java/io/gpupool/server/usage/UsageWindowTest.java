package io.gpupool.server.usage;

import io.gpupool.server.core.ServiceException;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The usage window's bounds in every form the API takes, its defaults and its errors; wait percentiles by nearest rank. */
class UsageWindowTest {
    private static final long NOW = Instant.parse("2026-12-04T06:00:00Z").toEpochMilli();

    @Test
    void bounds_are_ages_dates_instants_or_epoch_milliseconds() {
        assertThat(UsageWindow.parse("30d", null, NOW)).isEqualTo(new UsageWindow(NOW - 30L * 86_400_000, NOW));
        assertThat(UsageWindow.parse("12h", "90m", NOW)).isEqualTo(new UsageWindow(NOW - 12 * 3_600_000L, NOW - 90 * 60_000L));
        assertThat(UsageWindow.parse("2026-12-01", "2026-12-03T12:00:00Z", NOW)).isEqualTo(new UsageWindow(
                Instant.parse("2026-12-01T00:00:00Z").toEpochMilli(), Instant.parse("2026-12-03T12:00:00Z").toEpochMilli()));
        assertThat(UsageWindow.parse("1000", "45s", NOW)).isEqualTo(new UsageWindow(1000, NOW - 45_000));
        assertThat(UsageWindow.parse(null, "2026-12-02", NOW).untilMs() - UsageWindow.parse(null, "2026-12-02", NOW).sinceMs())
                .as("since defaults to 30 days before until").isEqualTo(UsageWindow.DEFAULT_SPAN_MS);
    }

    @Test
    void a_bound_that_cannot_be_read_or_an_empty_window_names_its_parameter() {
        for (String[] c : List.of(new String[] {"yesterday", null, "since"}, new String[] {null, "2026-02-30", "until"},
                new String[] {"5w", null, "since"}, new String[] {"1d", "2d", "since"}, new String[] {"-5", null, "since"})) {
            ServiceException e = catchThrowableOfType(ServiceException.class, () -> UsageWindow.parse(c[0], c[1], NOW));
            assertThat(e).as(String.join(" ", String.valueOf(c[0]), String.valueOf(c[1]))).isNotNull();
            assertThat(e.field()).isEqualTo(c[2]);
        }
        assertThat(catchThrowableOfType(ServiceException.class, () -> UsageReport.By.parse("week")).field()).isEqualTo("by");
        assertThat(UsageReport.By.parse(null)).isEqualTo(UsageReport.By.TENANT);
        assertThat(UsageReport.By.parse("hour")).isEqualTo(UsageReport.By.HOUR);
    }

    @Test
    void wait_percentiles_are_nearest_rank_in_seconds() {
        List<Long> ms = new java.util.ArrayList<>();
        for (long i = 1; i <= 10; i++) ms.add(i * 1000);
        assertThat(UsageReport.waits(ms)).isEqualTo(new UsageReport.Waits(10, 5, 9, 10, 10));
        assertThat(UsageReport.waits(List.of(2500L))).isEqualTo(new UsageReport.Waits(1, 2.5, 2.5, 2.5, 2.5));
        assertThat(UsageReport.waits(List.of()).count()).isZero();
    }
}
