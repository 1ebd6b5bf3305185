package io.gpupool.model;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Slurm's --time formats, read and written back. */
class TimeLimitTest {

    private static long sec(String text) {
        return TimeLimit.parseSeconds("job j", "time_limit", text);
    }

    @Test
    void everySlurmFormatReadsAsSlurmReadsIt() {
        assertThat(sec("90")).as("MINUTES").isEqualTo(5400);
        assertThat(sec("2:30")).as("MINUTES:SECONDS").isEqualTo(150);
        assertThat(sec("1:30:00")).as("HOURS:MINUTES:SECONDS").isEqualTo(5400);
        assertThat(sec("2-12")).as("DAYS-HOURS").isEqualTo(2 * 86_400 + 12 * 3600);
        assertThat(sec("1-0:30")).as("DAYS-HOURS:MINUTES").isEqualTo(86_400 + 1800);
        assertThat(sec("1-02:03:04")).as("DAYS-HOURS:MINUTES:SECONDS").isEqualTo(86_400 + 7200 + 180 + 4);
        assertThat(sec(" 48:00:00 ")).as("hours beyond a day, blanks around").isEqualTo(172_800);
    }

    @Test
    void theCanonicalFormParsesBackToTheSameSeconds() {
        for (long s : new long[]{1, 59, 60, 3599, 3600, 86_399, 86_400, 90_061, TimeLimit.MAX_SECONDS}) {
            assertThat(sec(TimeLimit.format(s))).as(TimeLimit.format(s)).isEqualTo(s);
        }
        assertThat(TimeLimit.format(5400)).isEqualTo("01:30:00");
        assertThat(TimeLimit.format(90_061)).isEqualTo("1-01:01:01");
    }

    @Test
    void aBadLimitNamesThePlaceTheFieldAndTheRule() {
        assertThatThrownBy(() -> sec("soon")).isInstanceOf(SpecException.class)
                .hasMessageStartingWith("job j: field 'time_limit': 'soon' is not a time limit; use MINUTES, ");
        assertThatThrownBy(() -> sec("1:75:00")).hasMessage("job j: field 'time_limit': '1:75:00': a part after the first must be at most 59, got 75");
        assertThatThrownBy(() -> sec("1-24")).hasMessage("job j: field 'time_limit': '1-24': a part after the first must be at most 23, got 24");
        assertThatThrownBy(() -> sec("0")).hasMessage("job j: field 'time_limit': must be more than 0 seconds, got '0'");
        assertThatThrownBy(() -> sec("366-00")).hasMessage("job j: field 'time_limit': must be at most 365 days, got '366-00'");
        assertThatThrownBy(() -> sec("-5")).isInstanceOf(SpecException.class);
        assertThatThrownBy(() -> sec("")).isInstanceOf(SpecException.class);
    }

    @Test
    void aJobSpecRefusesANonPositiveLimitAndKeepsAGivenOne() {
        assertThat(JobSpec.builder("a").timeLimitSec(60).build().timeLimitMs()).hasValue(60_000);
        assertThat(JobSpec.builder("a").build().timeLimitMs()).isEmpty();
        assertThatThrownBy(() -> JobSpec.builder("a").timeLimitMs(0).build()).hasMessage("job a: field 'time_limit': must be > 0");
    }
}
