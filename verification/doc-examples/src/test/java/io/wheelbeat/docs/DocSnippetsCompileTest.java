package io.wheelbeat.docs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every {@code ```java} block of the repository's README.md and docs/**&#47;*.md compiles
 * against the library modules (this module's test class path), one dynamic test per block named
 * by its file and line. How a block is compiled (whole file or method-body fragment, the imports
 * and variables a fragment gets): {@link SnippetCompiler}. A block that must not be compiled
 * (say, Netty's own code shown for comparison) has {@code <!-- not compiled: reason -->} on the
 * line right before its fence; it is reported as skipped with that reason.
 */
class DocSnippetsCompileTest {

    /** The repository root, two levels above this module (surefire runs in the module's basedir). */
    private static final Path REPOSITORY =
            Path.of("").toAbsolutePath().getParent().getParent();

    private static SnippetCompiler compiler;

    @BeforeAll
    static void startCompiler() {
        compiler = new SnippetCompiler(System.getProperty("java.class.path"));
    }

    @AfterAll
    static void stopCompiler() throws IOException {
        compiler.close();
    }

    @TestFactory
    Stream<DynamicTest> everyJavaBlockOfTheReadmeAndDocsCompiles() throws IOException {
        List<JavaBlock> blocks = new ArrayList<>();
        for (Path markdown : markdownFiles()) {
            String name = REPOSITORY.relativize(markdown).toString().replace('\\', '/');
            blocks.addAll(JavaBlock.parse(name, Files.readString(markdown)));
        }
        assertTrue(
                blocks.stream().anyMatch(b -> b.file().equals("README.md")),
                "no ```java block found in " + REPOSITORY.resolve("README.md") + ": wrong repository root?");
        long skipped = blocks.stream().filter(b -> b.skipReason() != null).count();
        System.out.printf(
                "doc snippets: %d java blocks, %d compiled, %d skipped (not compiled: reason)%n",
                blocks.size(), blocks.size() - skipped, skipped);
        return blocks.stream()
                .map(block -> DynamicTest.dynamicTest(block.location(), () -> {
                    Assumptions.assumeTrue(block.skipReason() == null, () -> "not compiled: " + block.skipReason());
                    List<String> errors = compiler.errors(block);
                    if (!errors.isEmpty()) {
                        fail("the java block at " + block.location() + " does not compile:\n"
                                + String.join("\n", errors));
                    }
                }));
    }

    private static List<Path> markdownFiles() throws IOException {
        Path readme = REPOSITORY.resolve("README.md");
        assertTrue(Files.isRegularFile(readme), "no README.md at " + REPOSITORY);
        List<Path> files = new ArrayList<>(List.of(readme));
        try (Stream<Path> docs = Files.walk(REPOSITORY.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        assertFalse(files.size() == 1, "no Markdown files under " + REPOSITORY.resolve("docs"));
        return files;
    }
}
