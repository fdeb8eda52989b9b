package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class DurationConverterTest {

    private final DurationConverter converter = new DurationConverter();

    @Test
    void readsEveryUnit() {
        assertEquals(7L, converter.convert("7ns"));
        assertEquals(7_000L, converter.convert("7us"));
        assertEquals(250_000_000L, converter.convert("250ms"));
        assertEquals(1_500_000_000L, converter.convert("1.5s"));
        assertEquals(120_000_000_000L, converter.convert("2m"));
    }

    @Test
    void readsNegativeValuesForValidationToReject() {
        assertEquals(-1_000_000_000L, converter.convert("-1s"));
    }

    @Test
    void rejectsANumberWithoutUnit() {
        assertThrows(TypeConversionException.class, () -> converter.convert("15"));
    }

    @Test
    void rejectsADurationTooLongToHold() {
        assertThrows(TypeConversionException.class, () -> converter.convert("99999999999m"));
    }

    @Test
    void formatReadsBackExactly() {
        for (long nanos : new long[] {1, 999, 1_000_000, 1_500_000_000L, 15_000_000_000L}) {
            assertEquals(nanos, converter.convert(DurationConverter.format(nanos)));
        }
    }
}
