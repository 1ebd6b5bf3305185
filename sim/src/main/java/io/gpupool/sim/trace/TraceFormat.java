package io.gpupool.sim.trace;

/**
 * A trace file format (Caffeine's simulator has the same split: one reader per format behind one
 * interface). A format binds a CSV header and maps each data row to a job; {@link TraceFile} does the
 * streaming, sorting, duplicate checks and bad-row handling for every format alike. A new format is one
 * class plus one line in {@link TraceFormats}.
 */
public interface TraceFormat {
    /** The name {@code --trace-format} takes. */
    String name();

    /** One line for {@code --help} and error messages. */
    String description();

    /** Checks the header's columns and returns the row mapper for this file. */
    RowMapper bind(Columns columns, TraceContext context);

    /**
     * Whether two mappers {@link #bind} gives may map rows on two threads at once: each row's job depends on that row
     * and the context alone, and mapping writes nothing shared. {@link TraceFile} then indexes a large file in two
     * halves at once.
     */
    default boolean mapsRowsIndependently() {
        return false;
    }

    /** Turns data rows of one file into jobs. */
    interface RowMapper {
        /**
         * The job of this row, its submit time moved back by {@code submitShiftMs}; or
         * {@code row.ignore(reason)} (null) for a valid row that is not a GPU job (counted, not an error).
         * Throws {@link io.gpupool.model.SpecException} (via {@link Row#error}) for a malformed row.
         */
        TraceJob map(Row row, long submitShiftMs);

        /** Whether submit times count from the earliest submit of the file (absolute timestamps). */
        default boolean relativeToFirstSubmit() {
            return false;
        }
    }
}
