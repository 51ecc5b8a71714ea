package io.outbox.store.dynamodb;

import java.util.concurrent.atomic.AtomicBoolean;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.CreateTableResponse;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * A client that forwards the operations the outbox uses to another one, so that a test can
 * override one of them (inject a race, answer with unprocessed items, fail). With a null delegate
 * every operation not overridden fails.
 */
class DelegatingDynamoDbClient implements DynamoDbClient {

    private final DynamoDbClient delegate;
    final AtomicBoolean closed = new AtomicBoolean();

    DelegatingDynamoDbClient(DynamoDbClient delegate) {
        this.delegate = delegate;
    }

    private DynamoDbClient delegate() {
        if (delegate == null) {
            throw new UnsupportedOperationException("this fake client has no delegate");
        }
        return delegate;
    }

    @Override
    public QueryResponse query(QueryRequest request) {
        return delegate().query(request);
    }

    @Override
    public PutItemResponse putItem(PutItemRequest request) {
        return delegate().putItem(request);
    }

    @Override
    public GetItemResponse getItem(GetItemRequest request) {
        return delegate().getItem(request);
    }

    @Override
    public UpdateItemResponse updateItem(UpdateItemRequest request) {
        return delegate().updateItem(request);
    }

    @Override
    public DeleteItemResponse deleteItem(DeleteItemRequest request) {
        return delegate().deleteItem(request);
    }

    @Override
    public BatchWriteItemResponse batchWriteItem(BatchWriteItemRequest request) {
        return delegate().batchWriteItem(request);
    }

    @Override
    public TransactWriteItemsResponse transactWriteItems(TransactWriteItemsRequest request) {
        return delegate().transactWriteItems(request);
    }

    @Override
    public CreateTableResponse createTable(CreateTableRequest request) {
        return delegate().createTable(request);
    }

    @Override
    public DescribeTableResponse describeTable(DescribeTableRequest request) {
        return delegate().describeTable(request);
    }

    @Override
    public String serviceName() {
        return SERVICE_NAME;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true) && delegate != null) {
            delegate.close();
        }
    }
}
