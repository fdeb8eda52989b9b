package io.wheelbeat.integration;

import io.wheelbeat.integration.grpc.GrpcIdleTest;
import io.wheelbeat.integration.vertx.VertxReadTimeoutTest;
import org.junit.jupiter.api.Test;

/** docs/integrations.md shows the gRPC-java and Vert.x recipes as the tests run them. */
class RecipesInDocsTest {

    @Test
    void theDocumentShowsTheGrpcRecipesAsTested() throws Exception {
        RecipeInDocs.assertShown(Class.forName(GrpcIdleTest.class.getPackageName() + ".GrpcRecipes"));
    }

    @Test
    void theDocumentShowsTheVertxRecipeAsTested() throws Exception {
        RecipeInDocs.assertShown(Class.forName(VertxReadTimeoutTest.class.getPackageName() + ".VertxRecipes"));
    }
}
