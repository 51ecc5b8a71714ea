package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoCredential;
import com.mongodb.MongoSecurityException;
import com.mongodb.MongoSocketOpenException;
import com.mongodb.ServerAddress;
import io.outbox.relay.ErrorTable;
import io.outbox.relay.FailureKind;
import java.io.IOException;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;

/**
 * Rule R13: the {@link ErrorTable} rows of the MongoDB and DynamoDB drivers, which the relay
 * matches by class name and error code, match the drivers' real exceptions (this module has every
 * driver). No server here refuses a MongoDB login or signs DynamoDB requests, so these rows are
 * checked on the exceptions the drivers build, not end to end.
 */
class ErrorTableDriverRowsTest {

    @Test
    void r13_aRefusedMongoDbLoginOrRoleIsFatalBeforeTheFirstGoodContact() {
        MongoSecurityException login = new MongoSecurityException(
                MongoCredential.createScramSha256Credential("relay", "admin", "pw".toCharArray()),
                "Exception authenticating MongoCredential{mechanism=SCRAM-SHA-256, userName='relay'}");
        MongoCommandException unauthorized = new MongoCommandException(BsonDocument.parse(
                "{ok: 0, errmsg: 'not authorized on outbox to execute command { find: \"outbox_messages\" }', "
                        + "code: 13, codeName: 'Unauthorized'}"), new ServerAddress("127.0.0.1", 27017));
        for (RuntimeException error : new RuntimeException[] {login, unauthorized,
            new IllegalStateException("wrapped", unauthorized)}) {
            ErrorTable.Row row = ErrorTable.refusal(error).orElseThrow();
            assertThat(row.side()).isEqualTo("MongoDB");
            assertThat(row.kind()).isEqualTo(FailureKind.FATAL);
        }
        MongoCommandException other = new MongoCommandException(BsonDocument.parse(
                "{ok: 0, errmsg: 'interrupted', code: 11601, codeName: 'Interrupted'}"), new ServerAddress());
        assertThat(ErrorTable.refusal(other)).isEmpty();
        assertThat(ErrorTable.refusal(new MongoSocketOpenException("refused", new ServerAddress(),
                new IOException("Connection refused")))).isEmpty();
    }

    @Test
    void r13_refusedDynamoDbCredentialsOrAnIamDenialAreFatalBeforeTheFirstGoodContact() {
        for (String code : new String[] {"UnrecognizedClientException", "InvalidSignatureException",
            "MissingAuthenticationTokenException", "AccessDeniedException"}) {
            DynamoDbException error = (DynamoDbException) DynamoDbException.builder().message("refused")
                    .statusCode(400).awsErrorDetails(AwsErrorDetails.builder().errorCode(code).build()).build();
            ErrorTable.Row row = ErrorTable.refusal(error).orElseThrow();
            assertThat(row.side()).as(code).isEqualTo("DynamoDB");
        }
        ProvisionedThroughputExceededException throttled = ProvisionedThroughputExceededException.builder()
                .message("throttled").awsErrorDetails(AwsErrorDetails.builder()
                        .errorCode("ProvisionedThroughputExceededException").build()).build();
        assertThat(ErrorTable.refusal(throttled)).isEmpty();
    }
}
