package io.wheelbeat.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One fenced {@code ```java} code block of a Markdown file.
 *
 * @param file       the Markdown file, as the report names it (e.g. {@code docs/idle.md})
 * @param line       1-based line of the block's first code line (the line after the opening fence)
 * @param code       the lines between the fences, joined with {@code \n}
 * @param skipReason why the block is not compiled, from a {@code <!-- not compiled: reason -->}
 *                   comment on the line right before the opening fence; null if it is compiled
 */
record JavaBlock(String file, int line, String code, String skipReason) {

    private static final Pattern OPENING_FENCE = Pattern.compile("^(\\s*)(`{3,}|~{3,})\\s*([^`\\s]*).*$");
    private static final Pattern NOT_COMPILED = Pattern.compile("^\\s*<!--\\s*not compiled:\\s*(.*?)\\s*-->\\s*$");

    /** Where the report points: {@code file:line}. */
    String location() {
        return file + ":" + line;
    }

    /**
     * The {@code java} blocks of a Markdown text, in order. Blocks in any other language (or none)
     * are not returned; the fence's info string is compared case-insensitively, so {@code ```Java}
     * counts. A fence indented inside a list item loses that indentation from each of its lines.
     */
    static List<JavaBlock> parse(String file, String markdown) {
        String[] lines = markdown.split("\r?\n", -1);
        List<JavaBlock> blocks = new ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            Matcher open = OPENING_FENCE.matcher(lines[i]);
            if (!open.matches()) {
                continue;
            }
            String indent = open.group(1);
            String fence = open.group(2);
            String closing = "^\\s*" + Pattern.quote(fence.substring(0, 1)) + "{" + fence.length() + ",}\\s*$";
            int end = i + 1;
            while (end < lines.length && !lines[end].matches(closing)) {
                end++;
            }
            if (open.group(3).equalsIgnoreCase("java")) {
                StringBuilder code = new StringBuilder();
                for (int j = i + 1; j < end; j++) {
                    String l = lines[j];
                    code.append(l.startsWith(indent) ? l.substring(indent.length()) : l.stripLeading())
                            .append('\n');
                }
                blocks.add(new JavaBlock(file, i + 2, code.toString(), skipReason(lines, i)));
            }
            i = end; // a fence inside a block is the block's text, not a new block
        }
        return blocks;
    }

    private static String skipReason(String[] lines, int fenceIndex) {
        if (fenceIndex == 0) {
            return null;
        }
        Matcher m = NOT_COMPILED.matcher(lines[fenceIndex - 1]);
        if (!m.matches()) {
            return null;
        }
        if (m.group(1).isEmpty()) {
            throw new IllegalArgumentException(
                    "a <!-- not compiled: reason --> marker needs a reason, before the block at " + "line "
                            + (fenceIndex + 2));
        }
        return m.group(1);
    }
}
