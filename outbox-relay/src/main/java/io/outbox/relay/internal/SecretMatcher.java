package io.outbox.relay.internal;

import java.util.Arrays;
import java.util.List;

/**
 * Finds every occurrence of any of a set of strings in a text in one pass (an Aho-Corasick
 * automaton over UTF-16 units), so that hiding many known secrets costs time linear in the
 * text's length plus the secrets' total length, not their product: a configuration with tens of
 * thousands of secret-named settings must not make each printed line cost as many scans.
 * Immutable after construction; thread-safe.
 */
final class SecretMatcher {

    private static final int ROOT = 0;

    /** Transitions: key {@code node << 16 | char}, open addressing. */
    private final long[] keys;
    private final int[] targets;
    private final int mask;
    /** Per node: the failure link, and the length of the longest string ending here (0: none). */
    private final int[] fail;
    private final int[] longest;

    /**
     * Builds the automaton.
     *
     * @param strings the strings to find; not null, none empty
     */
    SecretMatcher(List<String> strings) {
        int total = 1;
        for (String s : strings) {
            total += s.length();
        }
        int capacity = Integer.highestOneBit(Math.max(4, total * 2 - 1)) << 1;
        keys = new long[capacity];
        Arrays.fill(keys, -1L);
        targets = new int[capacity];
        mask = capacity - 1;
        int[] parent = new int[total];
        char[] via = new char[total];
        int[] depthLength = new int[total];
        int nodes = 1;
        for (String s : strings) {
            int node = ROOT;
            for (int i = 0; i < s.length(); i++) {
                int next = child(node, s.charAt(i));
                if (next < 0) {
                    next = nodes++;
                    put(node, s.charAt(i), next);
                    parent[next] = node;
                    via[next] = s.charAt(i);
                }
                node = next;
            }
            depthLength[node] = s.length();
        }
        // Nodes in order of depth, for the failure links: a node's link is shallower than it.
        int[] order = nodesByDepth(parent, nodes);
        fail = new int[nodes];
        longest = new int[nodes];
        for (int k = 1; k < nodes; k++) {
            int node = order[k];
            int up = parent[node];
            int link = ROOT;
            if (up != ROOT) {
                link = step(fail[up], via[node]);
            }
            fail[node] = link;
            longest[node] = Math.max(depthLength[node], longest[link]);
        }
    }

    private static int[] nodesByDepth(int[] parent, int nodes) {
        int[] depth = new int[nodes];
        int maxDepth = 0;
        for (int node = 1; node < nodes; node++) {
            // Parents are created before their children, so their depth is known.
            depth[node] = depth[parent[node]] + 1;
            maxDepth = Math.max(maxDepth, depth[node]);
        }
        int[] start = new int[maxDepth + 2];
        for (int node = 0; node < nodes; node++) {
            start[depth[node] + 1]++;
        }
        for (int d = 1; d < start.length; d++) {
            start[d] += start[d - 1];
        }
        int[] order = new int[nodes];
        for (int node = 0; node < nodes; node++) {
            order[start[depth[node]]++] = node;
        }
        return order;
    }

    private static long key(int node, char c) {
        return ((long) node << 16) | c;
    }

    private int slot(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 32) & mask;
    }

    private void put(int node, char c, int target) {
        long key = key(node, c);
        int i = slot(key);
        while (keys[i] != -1L) {
            i = (i + 1) & mask;
        }
        keys[i] = key;
        targets[i] = target;
    }

    private int child(int node, char c) {
        long key = key(node, c);
        for (int i = slot(key); keys[i] != -1L; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return targets[i];
            }
        }
        return -1;
    }

    /** The automaton's next state from a state on a character. */
    private int step(int state, char c) {
        int node = state;
        while (true) {
            int next = child(node, c);
            if (next >= 0) {
                return next;
            }
            if (node == ROOT) {
                return ROOT;
            }
            node = fail[node];
        }
    }

    /**
     * The text with each stretch covered by occurrences of the strings replaced by a marker;
     * overlapping occurrences make one stretch.
     *
     * @param text the text; not null
     * @param marker what a stretch becomes
     * @return the text, the same instance when nothing was found
     */
    String replaceAll(String text, String marker) {
        // Stretches found so far, ascending and disjoint: starts and ends.
        int[] starts = new int[8];
        int[] ends = new int[8];
        int count = 0;
        int state = ROOT;
        for (int i = 0; i < text.length(); i++) {
            state = step(state, text.charAt(i));
            int length = longest[state];
            if (length == 0) {
                continue;
            }
            int start = i + 1 - length;
            int end = i + 1;
            while (count > 0 && ends[count - 1] > start) {
                count--;
                start = Math.min(start, starts[count]);
            }
            if (count == starts.length) {
                starts = Arrays.copyOf(starts, count * 2);
                ends = Arrays.copyOf(ends, count * 2);
            }
            starts[count] = start;
            ends[count] = end;
            count++;
        }
        if (count == 0) {
            return text;
        }
        StringBuilder result = new StringBuilder(text.length());
        int copied = 0;
        for (int k = 0; k < count; k++) {
            result.append(text, copied, starts[k]).append(marker);
            copied = ends[k];
        }
        return result.append(text, copied, text.length()).toString();
    }
}
