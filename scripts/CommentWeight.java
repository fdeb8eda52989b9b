import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Comment weight of main code: comment characters per code character, per module, over the
 * non-blank characters of {@code src/main/java}. Fails (exit 1) when a module is over the limit.
 *
 * <pre>java scripts/CommentWeight.java [--max 0.6] [--files] MODULE_DIR...</pre>
 */
public class CommentWeight {

    public static void main(String[] args) throws IOException {
        double max = 0.6;
        boolean perFile = false;
        List<Path> modules = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--max" -> max = Double.parseDouble(args[++i]);
                case "--files" -> perFile = true;
                default -> modules.add(Path.of(args[i]));
            }
        }
        if (modules.isEmpty()) {
            System.err.println("usage: java scripts/CommentWeight.java [--max 0.6] [--files] MODULE_DIR...");
            System.exit(2);
        }
        boolean over = false;
        for (Path module : modules) {
            Path sources = module.resolve("src/main/java");
            if (!Files.isDirectory(sources)) {
                continue;
            }
            long comment = 0;
            long code = 0;
            List<Path> files;
            try (Stream<Path> walk = Files.walk(sources)) {
                files = walk.filter(p -> p.toString().endsWith(".java")).sorted().toList();
            }
            for (Path file : files) {
                long[] counts = count(Files.readString(file));
                comment += counts[0];
                code += counts[1];
                if (perFile) {
                    System.out.printf(
                            Locale.ROOT, "  %5.2f %s%n", ratio(counts[0], counts[1]), sources.relativize(file));
                }
            }
            double weight = ratio(comment, code);
            boolean moduleOver = weight > max;
            over |= moduleOver;
            System.out.printf(Locale.ROOT, "%s %.2f comment chars per code char (%d / %d)%s%n", module, weight,
                    comment, code, moduleOver ? " OVER " + max : "");
        }
        if (over) {
            System.exit(1);
        }
    }

    private static double ratio(long comment, long code) {
        return code == 0 ? 0 : (double) comment / code;
    }

    /** Non-blank characters inside comments and outside them; string and char literals count as code. */
    static long[] count(String s) {
        long comment = 0;
        long code = 0;
        int n = s.length();
        int i = 0;
        while (i < n) {
            char c = s.charAt(i);
            if (c == '/' && i + 1 < n && s.charAt(i + 1) == '/') {
                int end = s.indexOf('\n', i);
                end = end < 0 ? n : end;
                comment += nonBlank(s, i, end);
                i = end;
            } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
                int end = s.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                comment += nonBlank(s, i, end);
                i = end;
            } else if (s.startsWith("\"\"\"", i)) {
                int end = s.indexOf("\"\"\"", i + 3);
                end = end < 0 ? n : end + 3;
                code += nonBlank(s, i, end);
                i = end;
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < n && s.charAt(j) != c && s.charAt(j) != '\n') {
                    j += s.charAt(j) == '\\' ? 2 : 1;
                }
                int end = Math.min(n, j + 1);
                code += nonBlank(s, i, end);
                i = end;
            } else {
                if (!Character.isWhitespace(c)) {
                    code++;
                }
                i++;
            }
        }
        return new long[] {comment, code};
    }

    private static long nonBlank(String s, int from, int to) {
        long count = 0;
        for (int i = from; i < to; i++) {
            if (!Character.isWhitespace(s.charAt(i))) {
                count++;
            }
        }
        return count;
    }
}
