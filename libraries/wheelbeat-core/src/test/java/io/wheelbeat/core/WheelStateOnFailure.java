package io.wheelbeat.core;

import java.util.function.Supplier;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * Adds the wheel's state (every occupied slot and its timers) to a failing test's message, so
 * that a failure shows what the wheel held, not only what it did.
 */
final class WheelStateOnFailure implements TestExecutionExceptionHandler {

    private final Supplier<TimerWheel> wheel;

    WheelStateOnFailure(Supplier<TimerWheel> wheel) {
        this.wheel = wheel;
    }

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
        if (thrown instanceof AssertionError) {
            throw new AssertionError(thrown.getMessage() + "\n" + wheel.get().dump(), thrown);
        }
        throw thrown;
    }
}
