package io.wheelbeat.loadtest;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs every (size, handler) pair of a session, one after the other, each in a JVM of its own
 * unless the session is in-process. With repeats, the handlers take turns (wheel, netty, none,
 * wheel, ...) so that a drift of the machine's load reaches every handler alike. Each run's raw
 * result is kept under {@code runs/} in the report directory.
 */
final class Session {

    private static final Logger log = LoggerFactory.getLogger(Session.class);

    private final Settings settings;
    private final ObjectMapper json = Report.json();

    Session(Settings settings) {
        this.settings = settings;
    }

    List<RunResult> run() throws Exception {
        Path runsDir = settings.reportDir().resolve("runs");
        Files.createDirectories(runsDir);
        List<RunResult> results = new ArrayList<>();
        int total = settings.sizes().size() * settings.repeats() * settings.handlers().size();
        for (int size : settings.sizes()) {
            for (int round = 1; round <= settings.repeats(); round++) {
                for (IdleHandlerKind kind : settings.handlers()) {
                    Settings one = settings.forRun(kind, size);
                    Path file = runsDir.resolve(settings.tier() + "-" + kind + "-" + size
                            + (settings.repeats() > 1 ? "-" + round : "") + ".json");
                    log.info("run {} of {}: {} idle handler, {} connections ({} tier){}", results.size() + 1, total,
                            kind, size, settings.tier(),
                            settings.repeats() > 1 ? ", round " + round + " of " + settings.repeats() : "");
                    RunResult result;
                    if (settings.inProcess()) {
                        result = new ScenarioRun(one).run().inRound(round);
                        Report.writeRun(result, file);
                    } else {
                        result = ChildJvm.runWorker(one, file, json).inRound(round);
                    }
                    results.add(result);
                }
            }
        }
        return results;
    }
}
