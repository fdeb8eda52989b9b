package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * The report's "Repeat with" line gives back the very session it came from: parse a command
 * line, write the session's options, parse those, and the settings are the same.
 */
class RepeatCommandTest {

    private static final Preflight.Machine MACHINE = Preflight.Machine.current(List.of());

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "--quick --idle-handler netty --no-baseline --repeat 3",
                "--idle-handler none,wheel",
                "--idle-handler wheel,netty,none --no-baseline",
                "--idle-handler netty --no-baseline --event-loop wheel",
                "--event-loop netty,wheel --repeat 2 --steady-windows 4 --window 3s",
                "--event-loop netty,wheel",
                "--event-loop netty,wheel --idle-handler wheel --no-baseline",
                "--scaling --quick --burst --jvm-opt=-Xmx8g --jvm-opt=-XX:+UseParallelGC",
                "--transport tcp --protocol websocket --connections 1000 --seed 7 --jitter 0.25 --open-rate 1234.5",
            })
    void theSessionArgumentsReproduceTheSession(String given) {
        Settings first = settings(given.isEmpty() ? new String[0] : given.split(" "));
        List<String> again = first.sessionArgs();
        assertEquals(first, settings(again.toArray(String[]::new)), String.join(" ", again));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "--repeat 3"})
    void theDefaultSessionNamesNoBaselineTwice(String given) {
        String args = String.join(
                " ",
                settings(given.isEmpty() ? new String[0] : given.split(" ")).sessionArgs());
        assertTrue(args.contains("--idle-handler wheel,netty "), args);
        assertFalse(args.contains("--no-baseline"), args);
        assertTrue(args.contains("--repeat 3"), args);
    }

    private static Settings settings(String... args) {
        LoadTest command = new LoadTest();
        new CommandLine(command).parseArgs(args);
        return command.resolve(MACHINE);
    }
}
