/** Markdown read the way GitHub renders it, for the specs that check the docs. */

export interface ProseLine {
  /** 1-based line number in the document. */
  line: number;
  text: string;
}

export interface FencedBlock {
  /** 1-based line number of the opening fence. */
  line: number;
  language: string;
  code: string;
}

/** The document's lines outside fenced code blocks, and the blocks (``` or ~~~, closed by a fence as long). */
export function markdownParts(markdown: string): { prose: ProseLine[]; blocks: FencedBlock[] } {
  const prose: ProseLine[] = [];
  const blocks: FencedBlock[] = [];
  let open: { fence: string; block: FencedBlock; body: string[] } | undefined;
  markdown.split('\n').forEach((text, index) => {
    const fence = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(text);
    if (open) {
      if (fence && fence[1][0] === open.fence[0] && fence[1].length >= open.fence.length && fence[2] === '') {
        blocks.push({ ...open.block, code: open.body.join('\n') });
        open = undefined;
      } else open.body.push(text);
    } else if (fence) {
      open = { fence: fence[1], block: { line: index + 1, language: fence[2], code: '' }, body: [] };
    } else {
      prose.push({ line: index + 1, text });
    }
  });
  return { prose, blocks };
}
