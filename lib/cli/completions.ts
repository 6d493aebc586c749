/**
 * `cfgtool completions bash|zsh|fish`: shell completion scripts generated
 * from the commander command tree itself (commands, subcommands, options,
 * argument choices), so they follow every change to the commands. The
 * scripts are static: completing a word never starts cfgtool.
 *
 * @module
 */
import type { Command } from "commander";
import { Argument, type Command as CoreCommand, type Option } from "commander-core";

/** The shells a completion script can be generated for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;

/** One of {@linkcode SHELLS}. */
export type Shell = typeof SHELLS[number];

/** An option as completion sees it. */
export interface CompletionOption {
  /** Its spellings: `-V`, `--version`. */
  names: string[];
  /** Its help description (one line). */
  description: string;
  /** Whether a value follows it (`--kv <location>`). */
  takesValue: boolean;
  /** The values it accepts, when commander restricts them. */
  choices: string[];
}

/** A command as completion sees it: what may follow its name. */
export interface CompletionNode {
  /** The words from the program name to this command: `cfgtool flags lint`. */
  path: string;
  /** The command's own name. */
  name: string;
  /** Its one-line summary. */
  summary: string;
  /** Its visible options, `--help` included. */
  options: CompletionOption[];
  /** Its visible subcommands, the implicit `help` included. */
  commands: CompletionNode[];
  /** The values its first argument accepts, when restricted (`help` takes command names). */
  argumentChoices: string[];
}

const INSTALL_HELP =
  "\nInstall (once; each line goes in the shell's start-up file or runs once):\n" +
  "  bash  source <(cfgtool completions bash)            in ~/.bashrc\n" +
  "        (or: cfgtool completions bash > ~/.local/share/bash-completion/completions/cfgtool)\n" +
  '  zsh   cfgtool completions zsh > "${fpath[1]}/_cfgtool"   then restart zsh\n' +
  "        (or: source <(cfgtool completions zsh)           in ~/.zshrc, after compinit)\n" +
  "  fish  cfgtool completions fish > ~/.config/fish/completions/cfgtool.fish\n\n" +
  "Regenerate the script after upgrading cfgtool.\n";

/**
 * Registers `completions <shell>`, which prints the script for the whole
 * tree of the program it is registered on.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerCompletionsCommand } from "./completions.ts";
 * const program = new Command("cfgtool");
 * registerCompletionsCommand(program);
 * if (!program.commands.some((c) => c.name() === "completions")) throw new Error();
 * ```
 */
export function registerCompletionsCommand(program: Command): void {
  program
    .command("completions")
    .description(
      "Print a shell completion script (bash, zsh or fish) for every cfgtool command and option.",
    )
    .addArgument(new Argument("<shell>", "the shell to generate the script for").choices(SHELLS))
    .addHelpText("after", INSTALL_HELP)
    .action((shell, _opts, cmd) => {
      let root = cmd as unknown as CoreCommand;
      while (root.parent) root = root.parent;
      console.log(completionScript(shell as Shell, root));
    });
}

/**
 * Generates the completion script of a program for a shell.
 *
 * @param shell bash, zsh or fish
 * @param program the root command
 * @returns the script text
 *
 * @example
 * ```ts
 * import { Command } from "commander-core";
 * import { completionScript } from "./completions.ts";
 * const program = new Command("demo");
 * program.command("greet").option("--loud", "shout");
 * const script = completionScript("bash", program);
 * if (!script.includes("complete -o default -o bashdefault -F _demo demo")) throw new Error();
 * ```
 */
export function completionScript(shell: Shell, program: CoreCommand): string {
  const tree = completionTree(program);
  if (shell === "bash") return bashScript(tree);
  if (shell === "zsh") return zshScript(tree);
  return fishScript(tree);
}

/**
 * Reads the visible command tree as help shows it: hidden commands and
 * options are left out, `--help` and the implicit `help` command are in.
 *
 * @param cmd the root command
 * @param parentPath the words before this command (empty for the root)
 * @returns the tree
 *
 * @example
 * ```ts
 * import { Command } from "commander-core";
 * import { completionTree } from "./completions.ts";
 * const program = new Command("demo");
 * program.command("greet").option("--name <who>", "whom");
 * const tree = completionTree(program);
 * if (tree.commands[0]?.options[0]?.names[0] !== "--name") throw new Error();
 * ```
 */
export function completionTree(cmd: CoreCommand, parentPath = ""): CompletionNode {
  const help = cmd.createHelp();
  const path = parentPath === "" ? cmd.name() : `${parentPath} ${cmd.name()}`;
  const commands = help.visibleCommands(cmd).map((sub) => completionTree(sub, path));
  const names = commands.map((c) => c.name).filter((n) => n !== "help");
  for (const c of commands) {
    if (c.name === "help" && c.commands.length === 0) c.argumentChoices = names;
  }
  return {
    path,
    name: cmd.name(),
    summary: oneLine(cmd.summary() || cmd.description()),
    options: help.visibleOptions(cmd).map(completionOption),
    commands,
    argumentChoices: [...(help.visibleArguments(cmd)[0]?.argChoices ?? [])],
  };
}

function completionOption(o: Option): CompletionOption {
  return {
    names: [o.short, o.long].filter((n): n is string => n !== undefined),
    description: oneLine(o.description),
    takesValue: o.required || o.optional,
    choices: [...(o.argChoices ?? [])],
  };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function* walk(node: CompletionNode): Generator<CompletionNode> {
  yield node;
  for (const c of node.commands) yield* walk(c);
}

/** Bash and zsh: `'...'` needs no backslash escaping, only the quote itself. */
function shq(word: string): string {
  return `'${word.replace(/'/g, "'\\''")}'`;
}

/** Fish: inside `'...'` only `\\` and `\'` are escapes. */
function fishq(word: string): string {
  return `'${word.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

function identifier(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, "_");
}

function allOptionNames(node: CompletionNode): string[] {
  return node.options.flatMap((o) => o.names);
}

function valuedOptionNames(node: CompletionNode): string[] {
  return node.options.filter((o) => o.takesValue).flatMap((o) => o.names);
}

function bashScript(tree: CompletionNode): string {
  const fn = `_${identifier(tree.name)}`;
  const specs: string[] = [];
  const choices: string[] = [];
  for (const node of walk(tree)) {
    specs.push(
      `    ${shq(node.path)})\n` +
        `      ${fn}_cmds=${shq(node.commands.map((c) => c.name).join(" "))}\n` +
        `      ${fn}_opts=${shq(allOptionNames(node).join(" "))}\n` +
        `      ${fn}_valued=${shq(valuedOptionNames(node).join(" "))}\n` +
        `      ${fn}_args=${shq(node.argumentChoices.join(" "))} ;;`,
    );
    for (const o of node.options) {
      if (o.choices.length === 0) continue;
      for (const n of o.names) {
        choices.push(
          `    ${shq(`${node.path} ${n}`)}) ${fn}_values=${shq(o.choices.join(" "))} ;;`,
        );
      }
    }
  }
  return `# bash completion for ${tree.name}, generated by \`${tree.name} completions bash\`.
# Load it with: source <(${tree.name} completions bash)
${fn}_spec() {
  ${fn}_cmds='' ${fn}_opts='' ${fn}_valued='' ${fn}_args=''
  case "$1" in
${specs.join("\n")}
  esac
}

${fn}_option_values() {
  ${fn}_values=''
  case "$1" in
${choices.join("\n")}
  esac
}

${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath=${shq(tree.name)} word i skip=0
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    if ((skip)); then skip=0; continue; fi
    ${fn}_spec "$cmdpath"
    case "$word" in
      -*=*) ;;
      -*) if [[ " $${fn}_valued " == *" $word "* ]]; then skip=1; fi ;;
      *) if [[ " $${fn}_cmds " == *" $word "* ]]; then cmdpath="$cmdpath $word"; fi ;;
    esac
  done
  ${fn}_spec "$cmdpath"
  if ((skip)); then
    ${fn}_option_values "$cmdpath \${COMP_WORDS[COMP_CWORD-1]}"
    if [[ -n "$${fn}_values" ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$${fn}_values" -- "$cur")
    fi
  elif [[ "$cur" == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$${fn}_opts" -- "$cur")
  elif [[ -n "$${fn}_cmds" ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$${fn}_cmds" -- "$cur")
  elif [[ -n "$${fn}_args" ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$${fn}_args" -- "$cur")
  fi
  return 0
}

complete -o default -o bashdefault -F ${fn} ${tree.name}
`;
}

function zshScript(tree: CompletionNode): string {
  const fn = `_${identifier(tree.name)}`;
  const described = (name: string, description: string) =>
    shq(`${name.replace(/:/g, "\\:")}:${description}`);
  const specs: string[] = [];
  const choices: string[] = [];
  for (const node of walk(tree)) {
    const cmds = node.commands.map((c) => described(c.name, c.summary));
    const opts = node.options.flatMap((o) => o.names.map((n) => described(n, o.description)));
    specs.push(
      `    ${shq(node.path)})\n` +
        `      cmds=(${cmds.join(" ")})\n` +
        `      opts=(${opts.join(" ")})\n` +
        `      valued=(${valuedOptionNames(node).map(shq).join(" ")})\n` +
        `      args=(${node.argumentChoices.map(shq).join(" ")}) ;;`,
    );
    for (const o of node.options) {
      if (o.choices.length === 0) continue;
      for (const n of o.names) {
        choices.push(
          `    ${shq(`${node.path} ${n}`)}) values=(${o.choices.map(shq).join(" ")}) ;;`,
        );
      }
    }
  }
  return `#compdef ${tree.name}
# zsh completion for ${tree.name}, generated by \`${tree.name} completions zsh\`.
# Install it as _${tree.name} in a directory of $fpath, or source it after compinit.
${fn}_spec() {
  cmds=() opts=() valued=() args=()
  case "$1" in
${specs.join("\n")}
  esac
}

${fn}_option_values() {
  values=()
  case "$1" in
${choices.join("\n")}
  esac
}

${fn}() {
  local -a cmds opts valued args values names
  local cmdpath=${shq(tree.name)} word skip=0 i
  for ((i = 2; i < CURRENT; i++)); do
    word="\${words[i]}"
    if ((skip)); then skip=0; continue; fi
    ${fn}_spec "$cmdpath"
    case "$word" in
      -*=*) ;;
      -*) if ((\${valued[(Ie)$word]})); then skip=1; fi ;;
      *)
        names=("\${cmds[@]%%:*}")
        if ((\${names[(Ie)$word]})); then cmdpath="$cmdpath $word"; fi ;;
    esac
  done
  ${fn}_spec "$cmdpath"
  if ((skip)); then
    ${fn}_option_values "$cmdpath \${words[CURRENT-1]}"
    if ((\${#values})); then compadd -a values; else _files; fi
  elif [[ "$PREFIX" == -* ]]; then
    _describe -t options option opts
  elif ((\${#cmds})); then
    _describe -t commands command cmds
  elif ((\${#args})); then
    compadd -a args
  else
    _files
  fi
}

if [ "$funcstack[1]" = "${fn}" ]; then
  ${fn} "$@"
else
  compdef ${fn} ${tree.name}
fi
`;
}

function fishScript(tree: CompletionNode): string {
  const fn = `__${identifier(tree.name)}`;
  const cmdCases: string[] = [];
  const valuedCases: string[] = [];
  const lines: string[] = [];
  for (const node of walk(tree)) {
    const at = `-n ${fishq(`${fn}_at ${fishq(node.path)}`)}`;
    if (node.commands.length > 0) {
      cmdCases.push(
        `        case ${fishq(node.path)}\n` +
          `            printf '%s\\n' ${node.commands.map((c) => fishq(c.name)).join(" ")}`,
      );
      lines.push(`complete -c ${tree.name} ${at} -f`);
      for (const c of node.commands) {
        lines.push(
          `complete -c ${tree.name} ${at} -a ${fishq(c.name)} -d ${fishq(c.summary)}`,
        );
      }
    } else if (node.argumentChoices.length > 0) {
      lines.push(
        `complete -c ${tree.name} ${at} -f -a ${fishq(node.argumentChoices.join(" "))}`,
      );
    }
    const valued = valuedOptionNames(node);
    if (valued.length > 0) {
      valuedCases.push(
        `        case ${fishq(node.path)}\n` +
          `            printf '%s\\n' ${valued.map(fishq).join(" ")}`,
      );
    }
    for (const o of node.options) {
      const spelled = o.names.map((n) =>
        n.startsWith("--") ? `-l ${fishq(n.slice(2))}` : `-s ${fishq(n.slice(1))}`
      );
      const value = o.choices.length > 0
        ? ` -x -a ${fishq(o.choices.join(" "))}`
        : o.takesValue
        ? " -r"
        : "";
      lines.push(
        `complete -c ${tree.name} ${at} ${spelled.join(" ")}${value} -d ${fishq(o.description)}`,
      );
    }
  }
  return `# fish completion for ${tree.name}, generated by \`${tree.name} completions fish\`.
# Install: ${tree.name} completions fish > ~/.config/fish/completions/${tree.name}.fish
function ${fn}_cmds
    switch $argv[1]
${cmdCases.join("\n")}
    end
end

function ${fn}_valued
    switch $argv[1]
${valuedCases.join("\n")}
    end
end

function ${fn}_path
    set -l cmdpath ${fishq(tree.name)}
    set -l skip 0
    for word in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $word
            case '-*=*'
            case '-*'
                if contains -- $word (${fn}_valued $cmdpath)
                    set skip 1
                end
            case '*'
                if contains -- $word (${fn}_cmds $cmdpath)
                    set cmdpath "$cmdpath $word"
                end
        end
    end
    echo $cmdpath
end

function ${fn}_at
    test (${fn}_path) = $argv[1]
end

${lines.join("\n")}
`;
}
