package io.gpupool.predict.sizing;

/**
 * One number of an estimate with the arithmetic that produced it, so that --explain can show every step.
 *
 * @param name    short name, e.g. {@code weights}
 * @param bytes   the value in bytes
 * @param formula the formula with the numbers filled in, e.g. {@code 7B params x 2 bytes (bf16)}
 */
public record Term(String name, double bytes, String formula) {
    public long roundedBytes() {
        return Math.round(bytes);
    }

    /** The line --explain prints: {@code weights = 7B params x 2 bytes (bf16) = 13.04 GiB}. */
    public String explain() {
        return name + " = " + formula + " = " + Units.gib(bytes);
    }
}
