package io.wheelbeat.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The snippet check itself: it finds the right blocks and fails, at the right Markdown line, on a bad one. */
class SnippetCompilerTest {

    private static SnippetCompiler compiler;

    @BeforeAll
    static void startCompiler() {
        compiler = new SnippetCompiler(System.getProperty("java.class.path"));
    }

    @AfterAll
    static void stopCompiler() throws IOException {
        compiler.close();
    }

    private static JavaBlock onlyBlock(String markdown) {
        List<JavaBlock> blocks = JavaBlock.parse("doc.md", markdown);
        assertEquals(1, blocks.size(), blocks::toString);
        return blocks.get(0);
    }

    @Test
    void onlyJavaFencesAreBlocksAndTheirLineIsTheFirstCodeLine() {
        List<JavaBlock> blocks = JavaBlock.parse("doc.md", """
                # Title
                ```bash
                ./mvnw -B verify
                ```
                ```java
                int a = 1;
                ```
                ```
                no language
                ```
                ````Java
                ```java
                int b = 2;
                ````
                """);
        assertEquals(2, blocks.size(), blocks::toString);
        assertEquals("doc.md:6", blocks.get(0).location());
        assertEquals("int a = 1;\n", blocks.get(0).code());
        assertEquals("doc.md:12", blocks.get(1).location());
        assertEquals("```java\nint b = 2;\n", blocks.get(1).code(), "a shorter fence inside a block is its text");
    }

    @Test
    void aNotCompiledCommentRightBeforeTheFenceSkipsTheBlockWithItsReason() {
        JavaBlock skipped =
                onlyBlock("<!-- not compiled: Netty's own code, for comparison -->\n```java\nnew Foo(\n```\n");
        assertEquals("Netty's own code, for comparison", skipped.skipReason());
        assertNull(
                onlyBlock("<!-- not compiled: far away -->\n\n```java\nint a;\n```\n")
                        .skipReason(),
                "the marker must be on the line right before the fence");
        assertThrows(
                IllegalArgumentException.class,
                () -> JavaBlock.parse("doc.md", "<!-- not compiled: -->\n```java\n```\n"));
    }

    @Test
    void aFragmentThatCompilesReportsNothing() {
        JavaBlock block = onlyBlock("""
                ```java
                import java.util.List;
                List<Channel> channels = List.of(ch);
                pipeline.addLast(new MyCodec(), new MyHandler());
                Timer timer = new NettyWheelTimer();
                ```
                """);
        assertFalse(SnippetCompiler.isCompilationUnit(block.code()));
        assertEquals(List.of(), compiler.errors(block));
    }

    @Test
    void aFragmentThatDoesNotCompileIsReportedAtItsMarkdownLineWithTheCompilersMessage() {
        JavaBlock block = onlyBlock("""
                Some text.

                ```java
                import java.util.List;
                List<String> names = List.of("a");
                pipeline.addLast(new NoSuchHandler());
                ```
                """);
        List<String> errors = compiler.errors(block);
        assertEquals(1, errors.size(), errors::toString);
        assertTrue(errors.get(0).startsWith("doc.md:6: cannot find symbol"), errors.get(0));
        assertTrue(errors.get(0).contains("class NoSuchHandler"), errors.get(0));
        assertTrue(errors.get(0).endsWith("pipeline.addLast(new NoSuchHandler());"), errors.get(0));
    }

    @Test
    void aBlockDeclaringATopLevelTypeIsCompiledAsItStands() {
        JavaBlock good = onlyBlock("""
                ```java
                import io.netty.channel.ChannelInboundHandlerAdapter;

                public class Greeter extends ChannelInboundHandlerAdapter {
                }
                ```
                """);
        assertTrue(SnippetCompiler.isCompilationUnit(good.code()));
        assertEquals(List.of(), compiler.errors(good));

        JavaBlock bad = onlyBlock("""
                ```java
                public class Greeter {
                    Channel channel;   // no prelude for a compilation unit
                }
                ```
                """);
        List<String> errors = compiler.errors(bad);
        assertEquals(1, errors.size(), errors::toString);
        assertTrue(errors.get(0).startsWith("doc.md:3: cannot find symbol"), errors.get(0));
    }
}
