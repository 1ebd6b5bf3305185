package io.gpupool.engine.status;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A status whose message is made when first read is the same value as one given its message: same text, equal, same
 * hash; its text is made once, and the statuses built on it (backfill, context, amounts) say what they said before.
 */
class StatusTest {
    private static final Status CAUSE = Status.insufficient("capacity", Resource.GPUS, 4, 2, 8, "insufficient free GPUs");

    @Test
    void aLazyMessageIsMadeOnceOnFirstReadAndEqualsTheGivenOne() {
        AtomicInteger made = new AtomicInteger();
        Status lazy = Status.lazy(Code.UNSCHEDULABLE, "capacity", Resource.GPUS, 4, 2, 8, List.of(), () -> {
            made.incrementAndGet();
            return "insufficient free GPUs";
        });
        assertThat(made).hasValue(0);
        assertThat(lazy).isEqualTo(CAUSE).hasSameHashCodeAs(CAUSE);
        assertThat(lazy.message()).isEqualTo(CAUSE.message());
        assertThat(lazy.toString()).isEqualTo(CAUSE.toString()).contains("message=insufficient free GPUs");
        assertThat(made).hasValue(1);
        assertThat(lazy).isNotEqualTo(Status.insufficient("capacity", Resource.GPUS, 4, 2, 8, "another text"))
                .isNotEqualTo(CAUSE.withAmounts(4, 3, 8));
    }

    @Test
    void statusesMadeFromOthersTellTheirTextsAsBefore() {
        assertThat(Status.backfill("j7", CAUSE).message()).isEqualTo("cannot backfill without delaying j7: insufficient free GPUs");
        assertThat(Status.backfill("j7", CAUSE).plugin()).isEqualTo(Status.BACKFILL);
        assertThat(CAUSE.within("GPUs reserved from t=12.5s (expected); ").message())
                .isEqualTo("GPUs reserved from t=12.5s (expected); insufficient free GPUs");
        assertThat(CAUSE.within(() -> "in a reservation: ")).isEqualTo(CAUSE.within("in a reservation: "));
        Status lazyAmounts = Status.backfill("j7", CAUSE).withAmounts(1, 0, 8);
        assertThat(lazyAmounts.message()).isEqualTo("cannot backfill without delaying j7: insufficient free GPUs");
        assertThat(List.of(lazyAmounts.requested(), lazyAmounts.free(), lazyAmounts.capacity())).containsExactly(1L, 0L, 8L);
    }
}
