package io.wheelbeat.loadtest;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs every round of a session, one after the other, each in a JVM of its own unless the
 * session is in-process. A round holds every arm side by side; from round to round the arms'
 * order (which share of the connections, which server is made first) rotates, so that no arm
 * always has the same place. Each round's raw results are kept under {@code runs/} in the
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
        int total = settings.sizes().size() * settings.rounds();
        int done = 0;
        for (int size : settings.sizes()) {
            for (int round = 1; round <= settings.rounds(); round++) {
                Settings one = settings.forRound(size, round);
                Path file = runsDir.resolve(settings.tier() + "-" + size + "-round-" + round + ".json");
                log.info(
                        "round {} of {}: {} connections ({} tier), arms side by side: {}",
                        ++done,
                        total,
                        size,
                        settings.tier(),
                        String.join(", ", one.arms().stream().map(Arm::id).toList()));
                List<RunResult> arms =
                        settings.inProcess() ? new ScenarioRun(one).run() : ChildJvm.runWorker(one, file, json);
                if (settings.inProcess()) {
                    Report.writeRuns(arms, file);
                }
                for (RunResult r : arms) {
                    results.add(r.inRound(round));
                }
            }
        }
        return results;
    }
}
