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
 * unless the session is in-process. Each run's raw result is kept under {@code runs/} in the
 * report directory.
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
        for (int size : settings.sizes()) {
            for (IdleHandlerKind kind : settings.handlers()) {
                Settings one = settings.forRun(kind, size);
                Path file = runsDir.resolve(settings.tier() + "-" + kind + "-" + size + ".json");
                log.info("run {} of {}: {} idle handler, {} connections ({} tier)", results.size() + 1,
                        settings.sizes().size() * settings.handlers().size(), kind, size, settings.tier());
                RunResult result;
                if (settings.inProcess()) {
                    result = new ScenarioRun(one).run();
                    Report.writeRun(result, file);
                } else {
                    result = ChildJvm.runWorker(one, file, json);
                }
                results.add(result);
            }
        }
        return results;
    }
}
