package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class IndexBucketsTest {

    private static List<Integer> take(IndexBuckets b, int bucket) {
        List<Integer> members = new ArrayList<>();
        for (int m = b.takeAll(bucket); m != IndexBuckets.NONE; m = b.next(m)) {
            members.add(m);
        }
        return members;
    }

    @Test
    void aBucketGivesItsMembersInTheOrderFiled() {
        IndexBuckets b = new IndexBuckets(4, 10);
        b.add(1, 7);
        b.add(1, 2);
        b.add(3, 5);
        b.add(1, 9);
        assertEquals(List.of(7, 2, 9), take(b, 1));
        assertEquals(List.of(), take(b, 1), "taking empties the bucket");
        assertEquals(List.of(5), take(b, 3));
        assertEquals(List.of(), take(b, 0));
    }

    @Test
    void membersFiledAgainWhileTheirBucketIsWalkedKeepTheWalkAndTheirNewPlace() {
        IndexBuckets b = new IndexBuckets(4, 10);
        for (int m = 0; m < 5; m++) {
            b.add(0, m);
        }
        b.add(2, 8);
        List<Integer> walked = new ArrayList<>();
        int next = b.takeAll(0);
        while (next != IndexBuckets.NONE) {
            int m = next;
            next = b.next(m);
            walked.add(m);
            b.add(m % 2 == 0 ? 2 : 0, m); // the calendar files each member again as it goes
        }
        assertEquals(List.of(0, 1, 2, 3, 4), walked);
        assertEquals(List.of(8, 0, 2, 4), take(b, 2));
        assertEquals(List.of(1, 3), take(b, 0), "a bucket taken can be filled again at once");
    }
}
