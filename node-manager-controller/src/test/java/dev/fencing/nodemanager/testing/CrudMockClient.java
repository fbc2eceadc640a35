package dev.fencing.nodemanager.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The fabric8 CRUD mock API server for one test, answering every request ({@link AnsweringCrudDispatcher}), with a
 * client of it: fills the test instance's non-static {@code KubernetesClient} and {@code KubernetesMockServer}
 * fields before each test and closes both after it. Use it instead of
 * {@code @EnableKubernetesMockClient(crud = true)}, whose mock leaves a request it cannot apply unanswered.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(CrudMockExtension.class)
public @interface CrudMockClient {
}
